"""Killing the scheduler process (SIGKILL) mid-launch and starting it again: it re-subscribes with
its persisted FrameworkID, reconciles, and ends with every task running and owning exactly its
disk and container, with the IP its caller held for it — and after a kill, the scheduler has
released everything it owns (disks, containers) and nothing the caller owns (IPs)."""
import os
import signal
import subprocess
import time

import docker
import httpx

from spindle_common.clients import NetworkClient
from spindle_common.consul import ConsulClient
from spindle_common.migrations import upgrade
from tests.conftest import REPO
from tests.integration.platform.test_framework_e2e import NODE, member, mesos_master, scheduler_env, wait_tasks  # noqa: F401
from tests.support.internal import internal_headers
from tests.support.live_server import free_port, wait_ok

LAUNCHED = ("LAUNCHING", "TASK_STAGING", "TASK_STARTING")


def start_scheduler(env: dict[str, str], log) -> subprocess.Popen:
    process = subprocess.Popen([REPO / ".venv/bin/spindle-scheduler"], env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_ok(f"http://127.0.0.1:{env['SPINDLE_PORT']}/health")
    return process


def holdings(platform_env, owners: list[str]) -> dict[str, tuple[int, int, int]]:
    """owner -> (disks held, IPs held, containers) as disk-service, network-service and Docker see it."""
    admin = internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "crash-test", "admin")
    client = docker.from_env()
    result = {}
    for owner in owners:
        disks = httpx.get("http://127.0.0.1:8083/disks", params={"owner": owner}, headers=admin).json()["items"]
        ips = httpx.get("http://127.0.0.1:8084/allocations", params={"owner": owner}, headers=admin)
        containers = client.containers.list(all=True, filters={"label": f"io.spindle.member={owner}"})
        result[owner] = (len(disks), 1 if ips.status_code == 200 else 0, len(containers))
    client.close()
    return result


# mesos_master is the pytest fixture imported above, not a redefinition of it.
def test_scheduler_killed_mid_launch_recovers_without_leaks(fresh_database, platform_env, tmp_path,
                                                            mesos_master):  # noqa: F811
    upgrade("spindle_scheduler", fresh_database)
    port = free_port()
    env = scheduler_env(platform_env, fresh_database, mesos_master, port)
    headers = internal_headers(env["SPINDLE_INTERNAL_TOKEN"], "crash-test", "service")
    owners = [f"e2e-m{i}" for i in range(3)]
    log = open(tmp_path / "scheduler.log", "w")
    process = start_scheduler(env, log)
    network = NetworkClient("http://127.0.0.1:8084", env["SPINDLE_INTERNAL_TOKEN"], actor="crash-test")
    leases = {h["owner"]: {"address": h["address"], "docker_network": h["docker_network"]}
              for h in network.allocate_batch("default", [{"owner": o} for o in owners])}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            assert http.post("/launches", headers=headers, json={
                "cluster_id": "crash", "members": [member(i, platform_env["SPINDLE_BASE_IMAGE"], leases[f"e2e-m{i}"])
                                                   for i in range(3)]
            }).status_code == 202
            wait_tasks(http, headers, "crash", lambda ts: any(t["state"] in LAUNCHED for t in ts), timeout=60)
        os.kill(process.pid, signal.SIGKILL)  # mid-launch: some tasks launching, none running yet
        process.wait()

        process = start_scheduler(env, log)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            tasks = wait_tasks(http, headers, "crash", lambda ts: all(
                t["state"] == "TASK_RUNNING" or t["state"] in ("TASK_FAILED", "TASK_LOST", "TASK_KILLED") for t in ts))
            for task in tasks:
                expected = (1, 1, 1) if task["state"] == "TASK_RUNNING" else (0, 1, 0)
                assert holdings(platform_env, [task["member_id"]])[task["member_id"]] == expected, task
            assert any(t["state"] == "TASK_RUNNING" for t in tasks)

            http.post("/clusters/crash/kill", headers=headers)
            wait_tasks(http, headers, "crash", lambda ts: all(t["state"] in ("TASK_KILLED", "TASK_FAILED", "TASK_LOST")
                                                              for t in ts))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and holdings(platform_env, owners) != {o: (0, 1, 0) for o in owners}:
            time.sleep(0.5)
        assert holdings(platform_env, owners) == {o: (0, 1, 0) for o in owners}, "the scheduler's holds all freed"
        network.release_many(owners)
        assert holdings(platform_env, owners) == {o: (0, 0, 0) for o in owners}, "nothing leaked"
    finally:
        network.close()
        process.kill()
        process.wait()
        consul = ConsulClient(platform_env["SPINDLE_CONSUL_URL"])
        consul.deregister_service(f"scheduler-crashtest-127.0.0.1-{port}")
        consul.close()
