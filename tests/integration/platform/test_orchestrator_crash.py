"""Killing the orchestrator (SIGKILL) and starting it again on the same database:
- while a cluster is DEPLOYING: the cluster reaches RUNNING or FAILED with a reason — never stuck —
  with exactly one container, IP and disk per member, and after DELETE nothing is left;
- while a job runs: the restarted orchestrator waits for the job's driver again and records its
  end and logs."""
import base64
import os
import signal
import subprocess
import time
from dataclasses import dataclass

import docker
import httpx
import pytest

from spindle_common.consul import ConsulClient
from spindle_common.migrations import upgrade
from tests.conftest import REPO
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.internal import internal_headers
from tests.support.live_server import free_port, wait_ok

MEMBERS = 3


def wait_for(read, done, timeout: float = 180, interval: float = 0.5) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"still not there after {timeout:.0f} s: {value}")
        time.sleep(interval)


@dataclass
class Orchestrator:
    """A real orchestrator process of the test's own (fresh database, own port), to kill and restart."""

    env: dict[str, str]
    log: object
    http: httpx.Client
    process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([REPO / ".venv/bin/spindle-orchestrator"], env=self.env, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        wait_ok(f"http://127.0.0.1:{self.env['SPINDLE_PORT']}/health")

    def crash(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def cluster(self, cluster_id: str, states: tuple[str, ...], interval: float = 0.5) -> dict:
        return wait_for(lambda: self.http.get(f"/clusters/{cluster_id}").json(), lambda c: c["state"] in states,
                        interval=interval)

    def launch(self, count: int) -> dict:
        return self.http.post("/clusters", json={"owner": "crash", "owner_id": "crash", "product": "static-web",
                                                 "version": "1.0",
                                                 "options": {"roles": {"server": {"count": count}}}}).json()


@pytest.fixture
def orchestrator(fresh_database, platform_env, tmp_path):
    upgrade("spindle_orchestrator", fresh_database)
    port = free_port()
    env = {**os.environ, **platform_env, "SPINDLE_DATABASE_URL": fresh_database, "SPINDLE_PORT": str(port),
           "SPINDLE_SERVICE_NAME": "orchestrator-crashtest",
           "SPINDLE_SCHEDULER_DATABASE_URL": platform_env["SPINDLE_DATABASE_URL"]}
    headers = internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "api-server", "service")
    with open(tmp_path / "orchestrator.log", "w") as log, \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
        orch = Orchestrator(env, log, http)
        orch.start()
        try:
            yield orch
        finally:
            if orch.process.poll() is None:  # whatever a failed test left: destroy its clusters
                for c in http.get("/clusters").json()["items"]:
                    if c["state"] != "DESTROYED":
                        http.delete(f"/clusters/{c['id']}")
                        orch.cluster(c["id"], ("DESTROYED",))
            orch.process.kill()
            orch.process.wait()
            with ConsulClient(platform_env["SPINDLE_CONSUL_URL"]) as consul:
                consul.deregister_service(f"orchestrator-crashtest-127.0.0.1-{port}")


def test_orchestrator_killed_while_deploying_recovers_without_leaks(orchestrator, platform_env):
    cluster = orchestrator.launch(MEMBERS)
    seen = orchestrator.cluster(cluster["id"], ("DEPLOYING", "CONFIGURING", "RUNNING", "FAILED"), interval=0.05)
    orchestrator.crash()
    assert seen["state"] == "DEPLOYING", f"the kill must land while DEPLOYING, came at {seen['state']}"

    orchestrator.start()  # the same database: the restarted worker reconciles
    cluster = orchestrator.cluster(cluster["id"], ("RUNNING", "FAILED"))
    assert cluster["state"] == "RUNNING" or cluster["reason_code"], cluster
    containers = docker.from_env().containers.list(filters={"label": f"io.spindle.cluster={cluster['id']}"})
    running = [m for m in cluster["members"] if m["state"] == "TASK_RUNNING"]
    assert len(containers) == len(running), "one container per running member, none twice"
    assert all(len(m["disks"]) == 1 and m["ip"] for m in running)

    assert orchestrator.http.delete(f"/clusters/{cluster['id']}").status_code == 202
    assert_nothing_left(platform_env, orchestrator.cluster(cluster["id"], ("DESTROYED",)))


def test_a_job_running_while_the_orchestrator_dies_is_followed_to_its_end(orchestrator, platform_env):
    cluster = orchestrator.cluster(orchestrator.launch(1)["id"], ("RUNNING", "FAILED"))
    assert cluster["state"] == "RUNNING", cluster
    script = b"import time\nprint('started', flush=True)\ntime.sleep(4)\nprint('finished')\n"
    job = orchestrator.http.post(f"/clusters/{cluster['id']}/jobs", json={
        "owner": "crash", "main": "slow.py", "files": {"slow.py": base64.b64encode(script).decode()}}).json()
    job_url = f"/clusters/{cluster['id']}/jobs/{job['id']}"
    wait_for(lambda: orchestrator.http.get(job_url).json(), lambda j: j["state"] == "RUNNING", interval=0.1)
    orchestrator.crash()

    orchestrator.start()
    job = wait_for(lambda: orchestrator.http.get(job_url).json(), lambda j: j["state"] not in ("PENDING", "RUNNING"))
    assert (job["state"], job["exit_code"]) == ("SUCCEEDED", 0), job
    assert job["stdout"] == "started\nfinished\n"
    assert docker.from_env().containers.list(all=True, filters={"label": f"io.spindle.job={job['id']}"}) == []

    assert orchestrator.http.delete(f"/clusters/{cluster['id']}").status_code == 202
    assert_nothing_left(platform_env, orchestrator.cluster(cluster["id"], ("DESTROYED",)))
