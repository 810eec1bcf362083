"""Issue 4 end to end on the real platform: Spindle's Mesos framework places a 3-member request
(1 cpu, 512 MiB, 1 whole disk each, spread) through the embedded master; the executor runs three
containers with their own disk at /data/1 and their floating IPs, reachable from each other; killing
the tasks removes the containers and frees the disks (wiped). The floating IPs are the caller's
(the orchestrator's): held before the launch, handed over in each member's lease, never released
by the scheduler."""
import os
import time

import docker
import httpx
import pytest

from spindle_common.clients import NetworkClient
from spindle_common.migrations import upgrade
from spindle_scheduler.core.config import Settings
from spindle_scheduler.main import build_app
from spindle_scheduler.mesos.driver import running_framework
from tests.conftest import REPO
from tests.support.embedded_master import embedded_master
from tests.support.internal import internal_headers
from tests.support.live_server import serve

NODE = os.uname().nodename


@pytest.fixture
def mesos_master(platform_env, tmp_path):
    """An embedded master whose agent offers this node's disk-service inventory."""
    # 3 × (1 cpu + executor) on a 2-core development machine: the agent overcommits cpus.
    with embedded_master(tmp_path, SPINDLE_MESOS_RESOURCES=f"http://127.0.0.1:8083/nodes/{NODE}/mesos-resources",
                         SPINDLE_INTERNAL_TOKEN=platform_env["SPINDLE_INTERNAL_TOKEN"], SPINDLE_AGENT_CPUS="4") as url:
        yield url


def scheduler_env(platform_env, database_url: str, master: str, port: int) -> dict[str, str]:
    return {**os.environ, "SPINDLE_DATABASE_URL": database_url, "SPINDLE_MESOS_MASTER": master,
            "SPINDLE_INTERNAL_TOKEN": platform_env["SPINDLE_INTERNAL_TOKEN"], "SPINDLE_PORT": str(port),
            "SPINDLE_SERVICE_NAME": "scheduler-crashtest", "SPINDLE_CONSUL_URL": platform_env["SPINDLE_CONSUL_URL"],
            "SPINDLE_EXECUTOR_COMMAND": str(REPO / ".venv/bin/spindle-mesos-executor")}


@pytest.fixture
def scheduler(fresh_database, platform_env, mesos_master):
    upgrade("spindle_scheduler", fresh_database)
    settings = Settings(database_url=fresh_database, mesos_master=mesos_master,
                        internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                        executor_command=str(REPO / ".venv/bin/spindle-mesos-executor"))
    app = build_app(settings)
    with running_framework(app), serve(app) as url:
        yield url, internal_headers(settings.internal_token, "e2e-test", "service")


def member(i: int, image: str, lease: dict | None = None) -> dict:
    return {"member_id": f"e2e-m{i}", "role": "worker", "cpus": 1, "mem_mb": 512, "disks": {"hdd": 1},
            **({"lease": lease} if lease else {}),
            "container": {"image": image, "hostname": f"m{i}",
                          "command": ["sh", "-c",
                                      "hostname > /data/1/who && cd /data/1 && exec python3 -m http.server 8000"],
                          "health": {"tcp_port": 8000, "timeout_seconds": 60}}}


def wait_tasks(http, headers, cluster, predicate, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tasks = http.get(f"/clusters/{cluster}/tasks", headers=headers).json()
        if predicate(tasks):
            return tasks
        time.sleep(0.5)
    raise AssertionError(f"tasks did not get there: {tasks}")


def test_three_members_run_on_their_disks_and_ips_then_everything_is_freed(scheduler, platform_env):
    url, headers = scheduler
    client = docker.from_env()
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    admin = internal_headers(token, "e2e-test", "admin")
    network = NetworkClient("http://127.0.0.1:8084", token, actor="e2e-test")
    held = network.allocate_batch("default", [{"owner": f"e2e-m{i}"} for i in range(3)])
    leases = {h["owner"]: {"address": h["address"], "docker_network": h["docker_network"]} for h in held}
    with httpx.Client(base_url=url, timeout=30) as http:
        accepted = http.post("/launches", headers=headers, json={
            "cluster_id": "e2e", "members": [member(i, platform_env["SPINDLE_BASE_IMAGE"], leases[f"e2e-m{i}"])
                                             for i in range(3)]})
        assert accepted.status_code == 202, accepted.text
        tasks = wait_tasks(http, headers, "e2e", lambda ts: all(t["state"] == "TASK_RUNNING" for t in ts)
                           or any(t["state"] in ("TASK_FAILED", "TASK_ERROR", "TASK_LOST") for t in ts))
        assert [t["state"] for t in tasks] == ["TASK_RUNNING"] * 3, tasks
        roots = [t["disks"][0]["mount_point"] for t in tasks]
        ips = [t["ip"] for t in tasks]
        assert ips == [leases[t["member_id"]]["address"] for t in tasks] and len(set(roots)) == 3
        containers = [client.containers.list(filters={"label": f"io.spindle.task-id={t['task_id']}"})[0]
                      for t in tasks]
        for container, root in zip(containers, roots, strict=True):
            mounts = {m["Destination"]: m["Source"] for m in container.attrs["Mounts"]}
            assert mounts == {"/data/1": root}
        for i, container in enumerate(containers):  # each reaches the others by floating IP
            for j, ip in enumerate(ips):
                if i != j:
                    out = container.exec_run(["python3", "-c", f"import urllib.request; print(urllib.request.urlopen("
                                              f"'http://{ip}:8000/who', timeout=5).read().decode().strip())"])
                    assert out.output.decode().strip() == f"m{j}", out

        killed = http.post("/clusters/e2e/kill", headers=headers)
        assert killed.status_code == 202
        wait_tasks(http, headers, "e2e", lambda ts: all(t["state"] == "TASK_KILLED" for t in ts))

    assert client.containers.list(all=True, filters={"label": "io.spindle.cluster=e2e"}) == []
    with httpx.Client(base_url="http://127.0.0.1:8083", headers=admin, timeout=30) as disks:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            states = {d["mount_point"]: (d["state"], d["owner"])
                      for d in disks.get("/disks", params={"node": NODE}).json()["items"]}
            if all(states[root] == ("free", None) for root in roots):
                break
            time.sleep(0.5)
        assert all(states[root] == ("free", None) for root in roots), states
    for root in roots:
        assert not os.path.exists(os.path.join(root, "who")), "the wipe removed what the member wrote"
    with httpx.Client(base_url="http://127.0.0.1:8084", headers=admin, timeout=30) as http:
        for t in tasks:  # the leases are still the caller's: the scheduler never releases an IP
            held = http.get("/allocations", params={"owner": t["member_id"]}).json()
            assert [a["address"] for a in held] == [t["ip"]], held
        network.release_many([t["member_id"] for t in tasks])
        for t in tasks:
            assert http.get("/allocations", params={"owner": t["member_id"]}).status_code == 404
    network.close()
    client.close()


def test_dry_run_places_or_explains_without_holding_anything(scheduler, platform_env):
    url, headers = scheduler
    image = platform_env["SPINDLE_BASE_IMAGE"]
    admin = internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "e2e-test", "admin")
    free_before = httpx.get("http://127.0.0.1:8083/disks", params={"node": NODE, "state": "free"},
                            headers=admin).json()
    with httpx.Client(base_url=url, timeout=30) as http:
        deadline = time.monotonic() + 30
        while True:  # the first offers arrive within an allocation round or two
            plan = http.post("/placements/dry-run", headers=headers,
                             json={"cluster_id": "dry", "members": [member(i, image) for i in range(3)]}).json()
            if plan["placeable"] or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert plan["placeable"] and len(plan["members"]) == 3 and {m["node"] for m in plan["members"]} == {NODE}

        free_ssd = sum(d["disk_class"] == "ssd" for d in free_before["items"])
        greedy = {**member(9, image), "disks": {"ssd": free_ssd + 1}}
        refused = http.post("/placements/dry-run", headers=headers,
                            json={"cluster_id": "dry2", "members": [greedy]}).json()
        assert not refused["placeable"] and refused["members"] == []
        assert refused["reasons"][0]["nodes"] == [{"node": NODE, "constraint": "disks",
                                                   "message": f"needs {free_ssd + 1} ssd disks, {free_ssd} free"}]

        invalid = http.post("/placements/dry-run", headers=headers, json={"cluster_id": "dry3", "members": [
            {**greedy, "disks": {"floppy": 1}}]})
        assert invalid.status_code == 422 and "'hdd', 'ssd' or 'nvme'" in invalid.text
    free_after = httpx.get("http://127.0.0.1:8083/disks", params={"node": NODE, "state": "free"},
                           headers=admin).json()
    assert [d["id"] for d in free_after["items"]] == [d["id"] for d in free_before["items"]], "a dry run holds nothing"


def executor_pids(task_id: str) -> list[int]:
    """Processes started by the agent for ``task_id``'s executor (found by their environment)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"MESOS_EXECUTOR_ID={task_id}".encode() in f.read().split(b"\0"):
                    pids.append(int(pid))
        except OSError:
            continue
    return pids


def test_launch_failures_and_killed_executors_leave_nothing_behind(scheduler, platform_env):
    url, headers = scheduler
    client = docker.from_env()
    admin = internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "e2e-test", "admin")
    network = NetworkClient("http://127.0.0.1:8084", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="e2e-test")
    [lease] = network.allocate_batch("default", [{"owner": "e2e-victim"}])
    broken = {**member(7, "spindle/no-such-image:0"), "member_id": "e2e-noimage"}
    victim = {**member(8, platform_env["SPINDLE_BASE_IMAGE"], {"address": lease["address"],
                                                              "docker_network": lease["docker_network"]}),
              "member_id": "e2e-victim"}
    with httpx.Client(base_url=url, timeout=30) as http:
        assert http.post("/launches", headers=headers,
                         json={"cluster_id": "e2e-fail", "members": [broken]}).status_code == 202
        failed = wait_tasks(http, headers, "e2e-fail", lambda ts: ts[0]["state"] == "TASK_FAILED")[0]
        assert "image spindle/no-such-image:0 is not on this node" in failed["message"]

        assert http.post("/launches", headers=headers,
                         json={"cluster_id": "e2e-kill", "members": [victim]}).status_code == 202
        task = wait_tasks(http, headers, "e2e-kill", lambda ts: ts[0]["state"] == "TASK_RUNNING")[0]
        for pid in executor_pids(task["task_id"]):
            os.kill(pid, 9)  # the executor dies without cleaning up its container
        lost = wait_tasks(http, headers, "e2e-kill", lambda ts: ts[0]["state"] == "TASK_FAILED")[0]
        assert "executor exited" in lost["message"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and client.containers.list(all=True,
                                                                 filters={"label": "io.spindle.member=e2e-victim"}):
        time.sleep(0.3)
    assert client.containers.list(all=True, filters={"label": "io.spindle.member=e2e-victim"}) == []
    assert httpx.get("http://127.0.0.1:8084/allocations", params={"owner": "e2e-noimage"},
                     headers=admin).status_code == 404
    assert [a["address"] for a in httpx.get("http://127.0.0.1:8084/allocations", params={"owner": "e2e-victim"},
                                            headers=admin).json()] == [lease["address"]], "the caller's IP stays"
    for task in (failed, lost):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            disks = {d["mount_point"]: d for d in httpx.get("http://127.0.0.1:8083/disks", params={"node": NODE},
                                                            headers=admin).json()["items"]}
            if all(disks[d["mount_point"]]["state"] != "wiping" for d in task["disks"]):
                break
            time.sleep(0.3)
        # Wiped and free again — not quarantined by a wipe that raced the dead executor's container.
        assert [(disks[d["mount_point"]]["state"], disks[d["mount_point"]]["owner"]) for d in task["disks"]] == [
            ("free", None)], task
    network.release_many(["e2e-victim"])
    network.close()
    client.close()
