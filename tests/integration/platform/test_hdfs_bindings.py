"""Products bound to an HDFS cluster, through the public REST API on the real stack: a user's Spark
cluster launched with ``"bind": {"hdfs": <their hadoop cluster>}`` runs a word count job that reads
``hdfs://`` input and writes ``hdfs://`` output by plain paths (the platform filled fs.defaultFS),
across the two clusters' network isolation; the output read back through WebHDFS is exactly the
count. Another user cannot bind to that HDFS cluster (404, nothing created)."""
import random
import time
from collections import Counter

import httpx
import pytest

from spindle_client.client import SpindleError
from tests.integration.platform.test_hadoop_e2e import HDFS_USER, container_of, live_datanodes, webhdfs
from tests.support.jobs import JOBS, result_of, wait_job
from tests.support.live_users import live_user
from tests.support.through_restarts import retrying, settled

# The NameNode at 0.5 cpu and the Spark worker at 1: their starts and the job's executor were bound by
# their quotas (alone on this machine, 2026-11-29: 202 s at 0.25 and 0.5, 133 s at these; 2.5 of the
# 4 cpus make test offers, with the DataNodes, the master and the executors' 0.05 each).
HADOOP = {
    "roles": {"namenode": {"cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 1}},
              "datanode": {"count": 2, "cpus": 0.25, "mem_mb": 768, "disks": {"hdd": 1}}},
    "settings": {"replication": 2, "block_size_mb": 1},
    "wait_for_resources": True,
}
SPARK = {"roles": {"master": {"cpus": 0.25}, "worker": {"count": 1, "cpus": 1.0, "mem_mb": 1536, "disks": {"hdd": 1}}},
         "wait_for_resources": True}
WORDS = [f"word{i}" for i in range(300)]


@pytest.fixture
def user(database_url):
    with live_user(database_url, "bind") as client:
        yield client


@pytest.fixture
def stranger(database_url):
    with live_user(database_url, "bind-other") as client:
        yield client


def put(namenode: dict, path: str, data: bytes) -> None:
    created = httpx.put(webhdfs(namenode, path), params={"op": "CREATE", "user.name": HDFS_USER, "overwrite": "true"},
                        timeout=30)
    assert created.status_code == 307, created.text[:500]
    written = httpx.put(created.headers["location"], content=data, timeout=120)
    assert written.status_code == 201, written.text[:500]


def read_dir(namenode: dict, path: str) -> tuple[list[str], bytes]:
    """The folder's file names and the concatenated ``part-*`` files, read through WebHDFS."""
    listing = httpx.get(webhdfs(namenode, path), params={"op": "LISTSTATUS", "user.name": HDFS_USER}, timeout=30)
    assert listing.status_code == 200, listing.text[:500]
    names = sorted(s["pathSuffix"] for s in listing.json()["FileStatuses"]["FileStatus"])
    data = b""
    for name in names:
        if name.startswith("part-"):
            got = httpx.get(webhdfs(namenode, f"{path}/{name}"), params={"op": "OPEN", "user.name": HDFS_USER},
                            follow_redirects=True, timeout=60)
            assert got.status_code == 200, got.text[:500]
            data += got.content
    return names, data


def test_spark_bound_to_hdfs_counts_words_from_and_to_hdfs(user, stranger, platform_env):
    hadoop = retrying(lambda: user.launch("hadoop", "3.3", HADOOP))
    spark = None
    try:
        hadoop = settled(user, hadoop, ("RUNNING", "FAILED"), timeout=900)
        assert hadoop["state"] == "RUNNING", (hadoop["reason_code"], hadoop["reason"])
        namenode = next(m for m in hadoop["members"] if m["role"] == "namenode")
        live_datanodes(namenode, expected=2)

        with pytest.raises(SpindleError) as refused:
            stranger.launch("spark", "3.5", {**SPARK, "bind": {"hdfs": hadoop["id"]}})
        assert (refused.value.status, refused.value.code) == (404, "BOUND_CLUSTER_NOT_FOUND")
        assert list(stranger.clusters(stranger.username)) == [], "a refused launch creates nothing"

        rng = random.Random(7)
        lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(60_000)]
        text = ("\n".join(lines) + "\n").encode()
        assert len(text) > 3 << 20, "several 1 MiB blocks"
        put(namenode, "/spindle/input/words.txt", text)

        spark = retrying(lambda: user.launch("spark", "3.5", {**SPARK, "bind": {"hdfs": hadoop["id"]}}))
        spark = settled(user, spark, ("RUNNING", "FAILED"), timeout=600)
        assert spark["state"] == "RUNNING", (spark["reason_code"], spark["reason"])
        worker = next(m for m in spark["members"] if m["role"] == "worker")
        assert f"SPINDLE_NODE={worker['node']}" in container_of(worker).attrs["Config"]["Env"]

        job = user.submit(spark, JOBS / "spark_hdfs_wordcount.py", args=["/spindle/input", "/spindle/counts"])
        job = wait_job(user, spark, job, timeout=600)
        result = result_of(job)
        expected = Counter(word for line in lines for word in line.split())
        assert result["default_fs"] == f"hdfs://{namenode['ip']}:8020"
        assert result["input_partitions"] >= 4, "one split per block at least"
        assert Counter(result["counts"]) == expected
        names, data = read_dir(namenode, "/spindle/counts")
        assert "_SUCCESS" in names and any(n.startswith("part-") for n in names), names
        written = Counter({w: int(c) for w, c in (line.split("\t") for line in data.decode().splitlines())})
        assert written == expected, "the output in HDFS is the exact count"

        # The HDFS cluster Spark is bound to is not deleted out from under it without force.
        with pytest.raises(SpindleError) as refused:
            user.delete(hadoop)
        assert (refused.value.status, refused.value.code) == (409, "CLUSTER_IN_USE")
        assert refused.value.details["bound_by"] == [{"cluster_id": spark["id"], "product": "spark", "binding": "hdfs"}]
        assert user.cluster(hadoop)["state"] == "RUNNING"
    finally:
        for cluster in (spark, hadoop):
            if cluster:
                retrying(lambda c=cluster: user.delete(c))
        for cluster in (spark, hadoop):
            if cluster:
                deadline = time.monotonic() + 300
                while retrying(lambda c=cluster: user.cluster(c))["state"] != "DESTROYED":
                    assert time.monotonic() < deadline
                    time.sleep(1)
