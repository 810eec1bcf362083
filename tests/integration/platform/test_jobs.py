"""Jobs through the public API on the real stack: a driver program runs against a RUNNING cluster
with its own floating IP, its logs and output are kept after it ends, a failing one reports its
exit code and stderr, a running one is killed (and cleaned up) when its cluster is deleted, and bad
submissions are refused without a trace. A job's driver is a Mesos task of its own (placed on an
offer, its cpus and memory counted), run by the executor with the job's files in its sandbox."""
import base64
import io
import json
import tarfile
import time
from pathlib import Path

import docker
import httpx
import pytest

from spindle_client.client import SpindleError
from spindle_common import migrations
from spindle_common.clients import NetworkClient, SchedulerClient
from spindle_common.errors import ApiError
from spindle_orchestrator.core.config import Settings as OrchestratorSettings
from spindle_orchestrator.job_runner import held_cpus
from spindle_orchestrator.main import build_app
from spindle_orchestrator.worker import running_worker
from tests.conftest import REPO, STATE_DIR
from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.internal import internal_headers
from tests.support.live_server import serve
from tests.support.live_users import live_user
from tests.support.mesos_operator import mesos_operator

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
        assert time.monotonic() < deadline, (job["state"], job["message"])
        time.sleep(0.5)
    return job


def test_jobs_run_keep_their_logs_and_output_and_die_with_their_cluster(users, platform_env, tmp_path):
    alice, bob = users
    cluster = wait_settled(alice, alice.launch("static-web", "1.0"), ("RUNNING", "FAILED"), timeout=180)
    try:
        assert cluster["state"] == "RUNNING", cluster
        ip = cluster["members"][0]["ip"]

        done = wait_job(alice, cluster, alice.submit(cluster, JOBS / "fetch_peers.py", args=[ip]))
        assert (done["state"], done["exit_code"]) == ("SUCCEEDED", 0), (done["message"], done["stderr"][-2000:])
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


def mesos_tasks(name: str) -> list[dict]:
    """Tasks the Mesos master knows (live and completed) by name, through its operator API."""
    answer = mesos_operator("GET_TASKS")
    tasks = answer["get_tasks"]
    return [t for group in ("tasks", "completed_tasks") for t in tasks.get(group, []) if t["name"] == name]


def scalar(task: dict, name: str) -> float:
    return sum(r["scalar"]["value"] for r in task["resources"] if r["name"] == name)


def test_a_jobs_driver_is_a_mesos_task_run_by_the_executor(users, platform_env, tmp_path):
    alice, _ = users
    runner = json.loads((REPO / "catalog" / "static-web" / "1.0" / "manifest.json").read_text())["jobs"]
    cluster = wait_settled(alice, alice.launch("static-web", "1.0"), ("RUNNING", "FAILED"), timeout=180)
    try:
        assert cluster["state"] == "RUNNING", cluster
        works = tmp_path / "works.py"
        works.write_text("import os, time\nprint('driver up in', os.getcwd(), flush=True)\ntime.sleep(15)\n"
                         "open('/job/output/done.txt', 'w').write('done')\n")
        job = wait_job(alice, cluster, alice.submit(cluster, works), states=("RUNNING", *FINISHED))
        assert job["state"] == "RUNNING", job

        # Mesos runs it: a task named for the job, holding its cpus and memory in the agent's resources.
        [task] = mesos_tasks(f"job-{job['id']}")
        assert task["state"] == "TASK_RUNNING", task
        held = held_cpus(runner["cpus"], OrchestratorSettings.model_fields["job_cpus"].default)
        assert scalar(task, "cpus") == pytest.approx(held) and scalar(task, "mem") == runner["mem_mb"], task
        # … through Spindle's executor, with the job's files fetched into the task's sandbox on the node.
        container = docker.from_env().containers.get(f"spindle-job-{job['id']}")
        assert container.labels["io.spindle.task-id"] == task["task_id"]["value"]
        assert container.labels["io.spindle.job"] == job["id"] == container.labels["io.spindle.member"][4:]
        mounts = {m["Destination"]: m for m in container.attrs["Mounts"]}
        assert not mounts["/job"]["RW"] and mounts["/job/output"]["RW"]
        assert mounts["/job"]["Source"].startswith(str(STATE_DIR / "mesos-agent") + "/"), mounts["/job"]["Source"]
        assert container.attrs["HostConfig"]["NanoCpus"] == int(runner["cpus"] * 1e9), "capped at the manifest's cpus"
        assert container.attrs["NetworkSettings"]["Networks"][next(iter(container.attrs["NetworkSettings"][
            "Networks"]))]["IPAddress"] == job["ip"]
        # The scheduler reports it with the cluster's tasks, as a job: the cluster's members stay its members.
        with SchedulerClient("http://127.0.0.1:8082", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="test") as sched:
            kinds = {t["member_id"]: t["kind"] for t in sched.tasks(cluster["id"])}
        assert kinds == {**{m["member_id"]: "member" for m in cluster["members"]}, f"job-{job['id']}": "job"}
        assert [m["member_id"] for m in alice.cluster(cluster)["members"]] == [m["member_id"]
                                                                                for m in cluster["members"]]

        done = wait_job(alice, cluster, job)
        assert (done["state"], done["exit_code"]) == ("SUCCEEDED", 0), (done["message"], done["stderr"][-2000:])
        assert "driver up in /job" in done["stdout"]
        with tarfile.open(fileobj=io.BytesIO(alice.job_output(cluster, done["id"]))) as tar:
            assert tar.extractfile("output/done.txt").read() == b"done"
        assert [t["state"] for t in mesos_tasks(f"job-{job['id']}")] == ["TASK_FINISHED"]
        assert docker.from_env().containers.list(all=True, filters={"label": f"io.spindle.job={job['id']}"}) == []
        assert alice.cluster(cluster)["state"] == "RUNNING"
    finally:
        alice.delete(cluster)
        cluster = wait_settled(alice, cluster, ("DESTROYED",), timeout=180)
    assert_nothing_left(platform_env, cluster)


@pytest.fixture
def quick_orchestrator(fresh_database, platform_env, tmp_path):
    """An orchestrator of its own (fresh database, jobs in tmp_path) whose jobs may run 6 s."""
    migrations.upgrade("spindle_orchestrator", fresh_database)
    settings = OrchestratorSettings(database_url=fresh_database, internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                                    consul_url=platform_env["SPINDLE_CONSUL_URL"], state_dir=tmp_path,
                                    scheduler_database_url=platform_env["SPINDLE_DATABASE_URL"], job_timeout_s=6)
    app = build_app(settings)
    with running_worker(app), serve(app) as url:
        settings.public_url = url  # where its drivers' executors fetch files and put results
        yield url, internal_headers(settings.internal_token, "api-server", "service")


def test_a_job_past_its_time_is_killed_with_what_it_printed(quick_orchestrator, platform_env):
    url, headers = quick_orchestrator
    with httpx.Client(base_url=url, timeout=30, headers=headers) as http:
        cluster_id = http.post("/clusters", json={"owner": "alice", "owner_id": "alice", "product": "static-web",
                                                  "version": "1.0",
                                                  "options": {}}).json()["id"]
        try:
            deadline = time.monotonic() + 180
            while (cluster := http.get(f"/clusters/{cluster_id}").json())["state"] not in ("RUNNING", "FAILED"):
                assert time.monotonic() < deadline, cluster
                time.sleep(0.5)
            assert cluster["state"] == "RUNNING", cluster
            main = base64.b64encode(b"import time\nprint('started', flush=True)\ntime.sleep(600)\n").decode()
            job = http.post(f"/clusters/{cluster_id}/jobs", json={"owner": "alice", "main": "forever.py", "args": [],
                                                                 "files": {"forever.py": main}}).json()
            deadline = time.monotonic() + 60
            while (job := http.get(f"/clusters/{cluster_id}/jobs/{job['id']}").json())["state"] not in FINISHED:
                assert time.monotonic() < deadline, job
                time.sleep(0.5)
            assert (job["state"], job["message"], job["exit_code"]) == ("KILLED", "no result within 6 s", 137), job
            assert "started" in job["stdout"]
            assert [t["state"] for t in mesos_tasks(f"job-{job['id']}")] == ["TASK_KILLED"]
            assert http.get(f"/clusters/{cluster_id}").json()["state"] == "RUNNING", "the cluster goes on"
        finally:
            http.delete(f"/clusters/{cluster_id}")
            deadline = time.monotonic() + 180
            while (cluster := http.get(f"/clusters/{cluster_id}").json())["state"] != "DESTROYED":
                assert time.monotonic() < deadline, cluster
                time.sleep(0.5)
    assert_nothing_left(platform_env, cluster)
