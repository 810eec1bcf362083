"""Jobs through the public API on the real stack: a driver program runs against a RUNNING cluster
with its own floating IP, its logs and output are kept after it ends, a failing one reports its
exit code and stderr, a running one is killed (and cleaned up) when its cluster is deleted, and bad
submissions are refused without a trace."""
import io
import tarfile
import time
from pathlib import Path

import docker
import pytest

from spindle_client.client import SpindleError
from spindle_common.clients import NetworkClient
from spindle_common.errors import ApiError
from tests.conftest import STATE_DIR
from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.live_users import live_user

JOBS = Path(__file__).parent / "jobs"
JOBS_DIR = STATE_DIR / "jobs"  # the platform orchestrator's jobs_dir
FINISHED = ("SUCCEEDED", "FAILED", "KILLED")


@pytest.fixture
def users(database_url):
    with live_user(database_url, "jobs") as alice, live_user(database_url, "jobs") as bob:
        yield alice, bob


def wait_job(user, cluster, job, states=FINISHED, timeout=120) -> dict:
    deadline = time.monotonic() + timeout
    while (job := user.job(cluster, job["id"]))["state"] not in states:
        assert time.monotonic() < deadline, job
        time.sleep(0.5)
    return job


def test_jobs_run_keep_their_logs_and_output_and_die_with_their_cluster(users, platform_env, tmp_path):
    alice, bob = users
    cluster = wait_settled(alice, alice.launch("static-web", "1.0"), ("RUNNING", "FAILED"), timeout=180)
    try:
        assert cluster["state"] == "RUNNING", cluster
        ip = cluster["members"][0]["ip"]

        done = wait_job(alice, cluster, alice.submit(cluster, JOBS / "fetch_peers.py", args=[ip]))
        assert (done["state"], done["exit_code"]) == ("SUCCEEDED", 0), done
        assert f"of {cluster['id']}</h1>" in done["stdout"] and done["ip"] != ip
        with tarfile.open(fileobj=io.BytesIO(alice.job_output(cluster, done["id"]))) as tar:
            assert f"of {cluster['id']}</h1>" in tar.extractfile("output/pages.html").read().decode()

        failing = tmp_path / "fails.py"
        failing.write_text("import sys\nprint('about to fail')\nsys.exit('no input data')\n")
        failed = wait_job(alice, cluster, alice.submit(cluster, failing))
        assert (failed["state"], failed["exit_code"]) == ("FAILED", 1)
        assert "about to fail" in failed["stdout"] and "no input data" in failed["stderr"]

        # Refused without a trace: others' clusters, bad names, a main file that was not uploaded.
        with pytest.raises(SpindleError) as seen:
            bob.submit(cluster, failing)
        assert seen.value.status == 404
        bad = tmp_path / "..evil.py"
        bad.write_text("")
        with pytest.raises(SpindleError) as seen:
            alice.submit(cluster, bad)
        assert (seen.value.status, seen.value.code) == (422, "VALIDATION_FAILED")  # refused by the API's schema
        assert "..evil.py" in str(seen.value.details), seen.value.details
        with pytest.raises(SpindleError) as seen:
            alice._call("POST", f"/clusters/{alice.username}/static-web/1.0/{cluster['id']}/jobs",
                        json={"main": "a.py", "files": {"b.py": ""}})
        assert seen.value.code == "MAIN_NOT_UPLOADED"
        assert len(alice.jobs(cluster)) == 2

        sleeper = tmp_path / "sleeps.py"
        sleeper.write_text("import time\nprint('working', flush=True)\ntime.sleep(600)\n")
        long_job = wait_job(alice, cluster, alice.submit(cluster, sleeper), states=("RUNNING",))
    finally:
        alice.delete(cluster)
        cluster = wait_settled(alice, cluster, ("DESTROYED",), timeout=180)
    assert alice.job_output(cluster, done["id"]) and not (
        JOBS_DIR / done["id"]).exists(), "a destroyed cluster's job files are removed; logs stay"
    assert "of " in alice.job(cluster, done["id"])["stdout"]
    killed = alice.job(cluster, long_job["id"])
    assert (killed["state"], killed["message"]) == ("KILLED", "the cluster was deleted while the job ran")
    assert "working" in killed["stdout"]
    assert docker.from_env().containers.list(all=True, filters={"label": f"io.spindle.job={long_job['id']}"}) == []
    with NetworkClient("http://127.0.0.1:8084", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="t") as network:
        with pytest.raises(ApiError):
            network.request("GET", "/allocations", params={"owner": f"job-{long_job['id']}"})
    assert_nothing_left(platform_env, cluster)
    with pytest.raises(SpindleError) as seen:
        alice.submit(cluster, sleeper)
    assert seen.value.code == "CLUSTER_NOT_RUNNING"
