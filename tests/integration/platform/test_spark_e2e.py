"""Spark through the public REST API on the real stack: launch 1 master + 2 workers with 2 dedicated
disks each → RUNNING; a job submitted through the API (its driver a container with its own
floating IP) runs a shuffle-heavy word count against the master, whose result is right, whose
output is downloadable, and whose shuffle files landed on the workers' /data/*;
DELETE → DESTROYED with every disk wiped and free, every IP free, no container left."""
import io
import json
import tarfile
import time
from collections import Counter

import pytest

from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.jobs import JOBS, expected_counts
from tests.support.live_users import live_user

LINES = 200_000


@pytest.fixture
def user(database_url):
    with live_user(database_url, "spark") as client:
        yield client


def run_job(user, cluster: dict) -> dict:
    """Submit the word count as a Spindle job (its driver: a container with its own floating IP)."""
    job = user.submit(cluster, JOBS / "spark_wordcount.py", args=[str(LINES)])
    assert job["state"] == "PENDING" and job["files"] == ["spark_wordcount.py"]
    deadline = time.monotonic() + 600
    while (job := user.job(cluster, job["id"]))["state"] not in ("SUCCEEDED", "FAILED", "KILLED"):
        assert time.monotonic() < deadline, job
        time.sleep(1)
    assert job["state"] == "SUCCEEDED" and job["exit_code"] == 0, (job["message"], job["stderr"][-3000:])
    return job


def test_spark_cluster_runs_a_shuffle_job_on_its_disks_and_leaves_nothing(user, platform_env):
    cluster = user.launch("spark", "3.5", {"roles": {"worker": {"count": 2, "disks": {"hdd": 2}}}})
    try:
        cluster = wait_settled(user, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        workers = [m for m in cluster["members"] if m["role"] == "worker"]
        master = next(m for m in cluster["members"] if m["role"] == "master")
        assert len(workers) == 2 and all(len(w["disks"]) == 2 for w in workers)
        assert all(d["disk_class"] == "hdd" and d["device_path"].startswith("/dev/loop")
                   for w in workers for d in w["disks"])

        assert master["state"] == "TASK_RUNNING"
        job = run_job(user, cluster)
        result = json.loads(next(line for line in job["stdout"].splitlines() if line.startswith("RESULT "))[7:])
        assert Counter(result["counts"]) == expected_counts(LINES)
        with tarfile.open(fileobj=io.BytesIO(user.job_output(cluster, job["id"]))) as tar:
            assert json.load(tar.extractfile("output/counts.json")) == result["counts"]
        assert [j["id"] for j in user.jobs(cluster)] == [job["id"]]
        hosts = {f.split(":", 1)[0] for f in result["shuffle_files"]}
        dirs = {f.split(":", 1)[1].split("/")[2] for f in result["shuffle_files"]}
        assert hosts == {"worker-1", "worker-2"}, result["shuffle_files"]
        assert dirs == {"1", "2"}, "shuffle files on both dedicated disks of the workers"
    finally:
        user.delete(cluster)
        final = wait_settled(user, cluster, ("DESTROYED",), timeout=300)
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)
