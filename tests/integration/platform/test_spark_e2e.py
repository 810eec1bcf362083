"""Spark through the public REST API on the real stack: launch 1 master + 2 workers with 2 dedicated
disks each → RUNNING; a driver container (its own floating IP) runs a shuffle-heavy word count
against the master, whose result is right and whose shuffle files landed on the workers' /data/*;
DELETE → DESTROYED with every disk wiped and free, every IP free, no container left."""
import json
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import pytest

from spindle_common.clients import NetworkClient
from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.live_users import live_user

JOBS = Path(__file__).parent / "jobs"
LINES = 200_000


def expected_counts(lines: int) -> Counter:
    words = [f"w{i:03d}" for i in range(200)]
    return Counter(words[(i * 7 + j * 13) % 200] for i in range(lines) for j in range(10))


@pytest.fixture
def user(database_url):
    with live_user(database_url, "spark") as client:
        yield client


@pytest.fixture
def driver_ip(platform_env):
    """A floating IP for the driver container, so executors can connect back to it."""
    owner = f"spark-driver-{uuid.uuid4().hex[:6]}"
    with NetworkClient("http://127.0.0.1:8084", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="spark-test") as net:
        lease = net.allocate(owner, "default")
        try:
            yield lease
        finally:
            net.release(owner)


def submit(master_ip: str, lease: dict) -> dict:
    name = f"spindle-test-driver-{uuid.uuid4().hex[:6]}"
    command = ["docker", "run", "--rm", "--name", name, "--label", "io.spindle.owned=true",
               "--network", lease["docker_network"], "--ip", lease["address"], "-v", f"{JOBS}:/jobs:ro",
               "spindle/spark:3.5", "spark-submit", "--master", f"spark://{master_ip}:7077",
               "--conf", f"spark.driver.host={lease['address']}", "--conf", "spark.executor.memory=768m",
               "--conf", "spark.driver.memory=768m", "/jobs/spark_wordcount.py", str(LINES)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)
    result = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and result, f"spark-submit failed ({done.returncode}): {done.stderr[-3000:]}"
    return json.loads(result[0].removeprefix("RESULT "))


def test_spark_cluster_runs_a_shuffle_job_on_its_disks_and_leaves_nothing(user, driver_ip, platform_env):
    cluster = user.launch("spark", "3.5", {"roles": {"worker": {"count": 2, "disks": {"hdd": 2}}}})
    try:
        cluster = wait_settled(user, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        workers = [m for m in cluster["members"] if m["role"] == "worker"]
        master = next(m for m in cluster["members"] if m["role"] == "master")
        assert len(workers) == 2 and all(len(w["disks"]) == 2 for w in workers)
        assert all(d["disk_class"] == "hdd" and d["device_path"].startswith("/dev/loop")
                   for w in workers for d in w["disks"])

        result = submit(master["ip"], driver_ip)
        assert Counter(result["counts"]) == expected_counts(LINES)
        hosts = {f.split(":", 1)[0] for f in result["shuffle_files"]}
        dirs = {f.split(":", 1)[1].split("/")[2] for f in result["shuffle_files"]}
        assert hosts == {"worker-1", "worker-2"}, result["shuffle_files"]
        assert dirs == {"1", "2"}, "shuffle files on both dedicated disks of the workers"
    finally:
        user.delete(cluster)
        final = wait_settled(user, cluster, ("DESTROYED",), timeout=300)
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)
