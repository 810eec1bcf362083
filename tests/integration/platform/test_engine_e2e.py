"""The Spindle engine as a catalog product on the real stack: launch 1 backend + 2 executor
members × 2 dedicated disks → RUNNING; submit the multi-language word count (Python tokenizer,
importData, a C++ reducer compiled in the driver) and K-Means as Spindle jobs, get exact
results, see the shuffle and spill files on the members' /data/*; a word count saved by the
executors with saveAsTextFile('/job/output/counts') is in the job's output tarball; kill one executor member's
container during a K-Means iteration → the job finishes with the same centroids (Spindle
replaces the member on fresh disks with its floating IP); DELETE → nothing left."""
import io
import json
import tarfile
import time
from collections import Counter

import docker
import httpx
import pytest

from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.jobs import (
    CPP_WORDCOUNT,
    JOBS,
    assert_same_centroids,
    expected_counts,
    reference_centroids,
    result_of,
    wait_job,
)
from tests.support.live_users import live_user

LINES = 100_000
SAVE_LINES = 20_000
KMEANS_ARGS = ["40000", "16", "6", "8", "8"]
KMEANS_FAULT_ARGS = ["80000", "16", "6", "12", "8"]


@pytest.fixture(scope="module")
def engine_cluster(database_url, platform_env):
    with live_user(database_url, "engine") as user:
        cluster = user.launch("engine", "1.0", {"roles": {"executor": {"count": 2, "cpus": 0.75,
                                                                       "disks": {"hdd": 2}}}})
        try:
            cluster = wait_settled(user, cluster, ("RUNNING", "FAILED"), timeout=300)
            assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
            yield user, cluster
        finally:
            user.delete(cluster)
            final = wait_settled(user, cluster, ("DESTROYED",), timeout=300)
            assert final["state"] == "DESTROYED"
            assert_nothing_left(platform_env, final)


def test_members_disks_and_backend_status(engine_cluster):
    user, cluster = engine_cluster
    executors = [m for m in cluster["members"] if m["role"] == "executor"]
    [backend] = [m for m in cluster["members"] if m["role"] == "backend"]
    assert len(executors) == 2 and all(len(m["disks"]) == 2 for m in executors)
    status = httpx.get(f"http://{backend['ip']}:8090/", timeout=10).json()
    assert status["reachable"] == 2
    assert sorted(a["host"] for a in status["agents"]) == sorted(m["ip"] for m in executors)
    assert all(a["work_dirs"] == ["/data/1", "/data/2"] for a in status["agents"])


def test_multi_language_word_count_spills_on_the_members_disks(engine_cluster):
    user, cluster = engine_cluster
    job = user.submit(cluster, JOBS / "engine_wordcount.py", files=[CPP_WORDCOUNT], args=[str(LINES)])
    job = wait_job(user, cluster, job)
    result = result_of(job)
    assert Counter(result["counts"]) == expected_counts(LINES)
    with tarfile.open(fileobj=io.BytesIO(user.job_output(cluster, job["id"]))) as tar:
        assert json.load(tar.extractfile("output/counts.json")) == result["counts"]
    executors = sorted(m["ip"] for m in cluster["members"] if m["role"] == "executor")
    assert result["hosts"] == executors
    files = result["files"]
    hosts = {f.split(":", 1)[0] for f in files}
    disks = {f.split(":", 1)[1].split("/")[2] for f in files}
    assert len(hosts) == 2 and disks == {"1", "2"}, files  # both members, both of their disks
    assert any("/shuffle" in f for f in files) and any("/spill/" in f for f in files), files
    assert result["metrics"]["cpp"]["spill_files"] + result["metrics"]["python"]["spill_files"] > 0
    assert result["big_count"] == 3_000_000 and result["driver_dir"].startswith("/tmp/")


def test_saves_on_the_executors_end_up_in_the_jobs_output(engine_cluster):
    """saveAsTextFile('/job/output/counts') in cluster mode: the executors (other containers)
    write the part files on their own disks and the driver fetches them, so the job's output
    tarball holds them with the exact counts (also a relative saveAsJsonFile from /job)."""
    user, cluster = engine_cluster
    job = wait_job(user, cluster, user.submit(cluster, JOBS / "engine_save.py", args=[str(SAVE_LINES)]))
    result = result_of(job)
    parts = [f"part-{i:05d}" for i in range(4)]
    assert result["parts"] == parts and result["cwd"] == "/job"
    assert result["hosts"] == sorted(m["ip"] for m in cluster["members"] if m["role"] == "executor")
    expected = dict(expected_counts(SAVE_LINES))
    with tarfile.open(fileobj=io.BytesIO(user.job_output(cluster, job["id"]))) as tar:
        for directory in ("output/counts", "output/counts-json"):
            names = sorted(n for n in tar.getnames() if n.startswith(directory + "/"))
            assert names == [f"{directory}/{p}" for p in parts], tar.getnames()
            lines = [line for n in names for line in tar.extractfile(n).read().decode().splitlines()]
            pairs = [tuple(json.loads(line)) for line in lines]
            assert len(pairs) == len(expected) and dict(pairs) == expected


def test_kmeans_gives_the_reference_centroids(engine_cluster):
    user, cluster = engine_cluster
    job = wait_job(user, cluster, user.submit(cluster, JOBS / "engine_kmeans.py", args=KMEANS_ARGS))
    assert_same_centroids(result_of(job)["centroids"], reference_centroids(KMEANS_ARGS))


def test_killing_an_executor_member_mid_kmeans_keeps_the_result(engine_cluster):
    user, cluster = engine_cluster
    job = user.submit(cluster, JOBS / "engine_kmeans.py", args=KMEANS_FAULT_ARGS)
    client = docker.from_env()
    victim = next(m for m in cluster["members"] if m["role"] == "executor")
    deadline = time.monotonic() + 300
    while True:  # kill once iteration 2 is done, i.e. during iteration 3
        try:
            logs = client.containers.get(f"spindle-job-{job['id']}").logs().decode()
        except docker.errors.NotFound:
            logs = ""
        if "ITER 2 " in logs:
            break
        assert time.monotonic() < deadline and "RESULT" not in logs, logs[-2000:]
        time.sleep(0.05)
    [container] = client.containers.list(filters={"label": f"io.spindle.member={victim['member_id']}"})
    container.kill()
    job = wait_job(user, cluster, job)
    result = result_of(job)
    assert_same_centroids(result["centroids"], reference_centroids(KMEANS_FAULT_ARGS))
    assert result["metrics"]["executors_lost"] >= 1
    member = next(m for m in user.cluster(cluster)["members"] if m["member_id"] == victim["member_id"])
    assert member["replacements"] == 1 and member["ip"] == victim["ip"]
