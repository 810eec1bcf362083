"""Killing the orchestrator (SIGKILL) while a cluster is DEPLOYING and starting it again: the
cluster reaches RUNNING or FAILED with a reason — never stuck — with exactly one container, IP and
disk per member, and after DELETE nothing is left."""
import os
import signal
import subprocess
import time

import docker
import httpx

from spindle_common.auth import internal_headers
from spindle_common.consul import ConsulClient
from spindle_common.migrations import upgrade
from tests.conftest import REPO
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.live_server import free_port, wait_ok

MEMBERS = 3


def start_orchestrator(env: dict[str, str], log) -> subprocess.Popen:
    process = subprocess.Popen([REPO / ".venv/bin/spindle-orchestrator"], env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_ok(f"http://127.0.0.1:{env['SPINDLE_PORT']}/health")
    return process


def wait_state(http: httpx.Client, cluster_id: str, states: tuple[str, ...], timeout: float = 180,
               interval: float = 0.5) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        cluster = http.get(f"/clusters/{cluster_id}").json()
        if cluster["state"] in states:
            return cluster
        if time.monotonic() > deadline:
            raise AssertionError(f"cluster stuck in {cluster['state']}: {cluster}")
        time.sleep(interval)


def test_orchestrator_killed_while_deploying_recovers_without_leaks(fresh_database, platform_env, tmp_path):
    upgrade("spindle_orchestrator", fresh_database)
    port = free_port()
    env = {**os.environ, **platform_env, "SPINDLE_DATABASE_URL": fresh_database, "SPINDLE_PORT": str(port),
           "SPINDLE_SERVICE_NAME": "orchestrator-crashtest", "SPINDLE_POLL_INTERVAL_S": "0.3"}
    headers = internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "api-server", "service")
    log = open(tmp_path / "orchestrator.log", "w")
    process = start_orchestrator(env, log)
    cluster = None
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
            cluster = http.post("/clusters", json={"owner": "crash", "product": "static-web", "version": "1.0",
                                                   "options": {"roles": {"server": {"count": MEMBERS}}}}).json()
            seen = wait_state(http, cluster["id"], ("DEPLOYING", "CONFIGURING", "RUNNING", "FAILED"), interval=0.05)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            assert seen["state"] == "DEPLOYING", f"the kill must land while DEPLOYING, came at {seen['state']}"

            process = start_orchestrator(env, log)  # the same database: the restarted worker reconciles
            cluster = wait_state(http, cluster["id"], ("RUNNING", "FAILED"))
            assert cluster["state"] == "RUNNING" or cluster["reason_code"], cluster
            containers = docker.from_env().containers.list(filters={"label": f"io.spindle.cluster={cluster['id']}"})
            running = [m for m in cluster["members"] if m["state"] == "TASK_RUNNING"]
            assert len(containers) == len(running), "one container per running member, none twice"
            assert all(len(m["disks"]) == 1 and m["ip"] for m in running)

            assert http.delete(f"/clusters/{cluster['id']}").status_code == 202
            cluster = wait_state(http, cluster["id"], ("DESTROYED",))
        assert_nothing_left(platform_env, cluster)
    finally:
        if cluster and cluster.get("state") != "DESTROYED" and process.poll() is None:  # the test failed midway
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as http:
                http.delete(f"/clusters/{cluster['id']}")
                wait_state(http, cluster["id"], ("DESTROYED",))
        process.kill()
        process.wait()
        with ConsulClient(platform_env["SPINDLE_CONSUL_URL"]) as consul:
            consul.deregister_service(f"orchestrator-crashtest-127.0.0.1-{port}")
