"""Spindle on three simulated nodes (deploy/node): each a network namespace with its own dockerd,
loop disks, Mesos agent and node agent, joined to the control plane by the node fabric. Members get
floating IPs of the fabric pool (macvlan), which follow them to another node.

For the module, this machine's own Mesos agent is stopped and the orchestrator takes its IPs from
the `fabric` pool, as on a platform whose members run on other machines; both are put back after.
"""
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import dns.resolver
import docker
import httpx
import pytest

from spindle_common.clients import DiskClient
from tests.integration.platform.cluster_checks import RESOLVER, wait_settled
from tests.support.live_users import live_user

REPO = Path(__file__).resolve().parents[3]
STATE_DIR = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
NODES = ("n1", "n2", "n3")
pytestmark = pytest.mark.disruptive  # stops this machine's agent and restarts the orchestrator
MESOS_OPERATOR = "http://127.0.0.1:5050/api/v1"


def sh(*command: str, env: dict | None = None, timeout: float = 600) -> str:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def deploy_lib(call: str, env: dict | None = None) -> str:
    """One function of deploy/lib, with the platform's environment (as deploy/restart has it)."""
    return sh("bash", "-c", "source deploy/lib/common.sh; for l in services nodes; do source deploy/lib/$l.sh; done;"
              f" set -a; source {STATE_DIR}/spindle.env; set +a; {call}", env=env)


def node_docker(node: str) -> docker.DockerClient:
    return docker.DockerClient(base_url=f"unix:///run/spdl/{node}/docker.sock")


def agents() -> dict[str, dict]:
    answer = httpx.post(MESOS_OPERATOR, json={"type": "GET_AGENTS"}, timeout=10).raise_for_status().json()
    return {a["agent_info"]["hostname"]: a for a in answer["get_agents"].get("agents", [])}


def wait_for(what: str, check, timeout: float = 120, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(every)


@pytest.fixture(scope="module")
def nodes(platform_env) -> Iterator[dict]:
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
    for i, node in enumerate(NODES, 1):
        sh("deploy/node", "add", node, str(i), "2:hdd", "1", "2048")
    deploy_lib("stop_mesos_agent")
    sh("deploy/restart", "orchestrator", env={"SPINDLE_NETWORK_POOL": "fabric"})
    try:
        wait_for("three node agents in Mesos", lambda: set(NODES) <= set(agents()) and host not in agents(), 60)
        yield {"host": host, "token": platform_env["SPINDLE_INTERNAL_TOKEN"]}
    finally:
        for node in NODES:
            sh("deploy/node", "remove", node)
        sh("deploy/restart", "orchestrator")
        deploy_lib("start_mesos_agent")


def node_disks(token: str, node: str) -> list[dict]:
    with DiskClient("http://127.0.0.1:8083", token, actor="test", role="admin") as disks:
        return [d for d in disks.request("GET", "/disks", params={"node": node, "page_size": 500})["items"]]


def test_each_node_registers_its_own_disks_and_agent(nodes):
    for node in NODES:
        disks = node_disks(nodes["token"], node)
        assert sorted(d["fs_label"] for d in disks) == [f"spdl-{node}-1", f"spdl-{node}-2"], disks
        assert all(d["mount_point"].startswith(f"{STATE_DIR}/nodes/{node}/disks/") for d in disks), disks
        assert all(d["state"] == "free" for d in disks), disks
    # Every node has its own Docker daemon: the fabric pool's network exists there, made by its agent.
    for node in NODES:
        wait_for(f"the fabric network on {node}",
                 lambda n=node: [net for net in node_docker(n).networks.list() if net.name == "spindle-fabric"], 30)


def resolved(name: str) -> list[str]:
    """The name's addresses in Consul's DNS ([] while its health check does not pass)."""
    try:
        return [a.address for a in RESOLVER.resolve(name, "A")]
    except dns.resolver.NXDOMAIN:
        return []


def member_page(ip: str) -> str:
    """The member's page, or "" while nothing answers at its address."""
    try:
        return httpx.get(f"http://{ip}:8000/index.html", timeout=3).text
    except httpx.HTTPError:
        return ""


def test_a_node_dies_its_member_moves_with_its_ip_and_the_node_comes_back_clean(nodes, database_url):
    with live_user(database_url, "nodes") as user:
        options = {"roles": {"server": {"count": 2}}, "placement": {"anti_affinity": ["server"]}}
        cluster = wait_settled(user, user.launch("static-web", "1.0", options), ("RUNNING", "FAILED"), timeout=240)
        try:
            assert cluster["state"] == "RUNNING", cluster
            placed = {m["member_id"]: m["node"] for m in cluster["members"]}
            assert len(set(placed.values())) == 2 and set(placed.values()) <= set(NODES), placed
            for member in cluster["members"]:
                # On its node's own Docker daemon, not this machine's; reachable at its floating IP.
                [container] = node_docker(member["node"]).containers.list(
                    filters={"label": f"io.spindle.member={member['member_id']}"})
                container.exec_run(["sh", "-c", "echo before > /data/1/marker"])
                assert f"of {cluster['id']}</h1>" in member_page(member["ip"])
                mine = {"label": f"io.spindle.member={member['member_id']}"}
                assert docker.from_env().containers.list(filters=mine) == [], "not on this machine's Docker"
            victim = cluster["members"][0]
            dead = victim["node"]
            held_on_dead = {d["id"] for d in victim["disks"]}

            killed_at = time.monotonic()
            sh("deploy/node", "kill", dead)

            def moved():
                now = user.cluster(cluster)
                member = next(m for m in now["members"] if m["member_id"] == victim["member_id"])
                ok = (member["state"] == "TASK_RUNNING" and member["node"] not in (None, dead)
                      and now["state"] == "RUNNING")
                return (now, member) if ok else None
            now, member = wait_for("the member running on another node", moved, timeout=180)
            page = wait_for("its page at the same IP", lambda: member_page(member["ip"]), 30)
            recovered_s = time.monotonic() - killed_at
            print(f"node loss: member {victim['member_id']} back on {member['node']} after {recovered_s:.1f} s")
            assert (member["ip"], member["dns_name"]) == (victim["ip"], victim["dns_name"]), member
            assert f"of {cluster['id']}</h1>" in page
            assert wait_for("its DNS name resolving again", lambda: resolved(member["dns_name"]), 30) == [victim["ip"]]
            [new] = node_docker(member["node"]).containers.list(
                filters={"label": f"io.spindle.member={victim['member_id']}"})
            assert new.exec_run(["ls", "/data/1/marker"]).exit_code != 0, "fresh disks on the new node"
            replaced = [e for e in user.events(now) if e["state"] == "REPLACED"]
            assert [e["member_id"] for e in replaced] == [victim["member_id"]], replaced
            assert f"while node {dead} unreachable" in replaced[0]["message"], replaced[0]
            # The survivor kept its container and its file.
            survivor = next(m for m in now["members"] if m["member_id"] != victim["member_id"])
            [kept] = node_docker(survivor["node"]).containers.list(
                filters={"label": f"io.spindle.member={survivor['member_id']}"})
            assert kept.exec_run(["cat", "/data/1/marker"]).output == b"before\n"

            # The dead node's disks wait for their node: released, not free, until its agent wipes them.
            assert {d["state"] for d in node_disks(nodes["token"], dead) if d["id"] in held_on_dead} <= {"wiping"}
            sh("deploy/node", "start", dead)
            wait_for("the node's released disks wiped by its own agent",
                     lambda: all(d["state"] == "free" for d in node_disks(nodes["token"], dead)), 120)
            # Its old container never runs again and is removed by its node agent (a minute after it
            # stopped: docs/MULTINODE.md); nothing is held twice.
            old = {"label": f"io.spindle.member={victim['member_id']}"}
            wait_for(f"the old container of {victim['member_id']} gone from {dead}",
                     lambda: node_docker(dead).containers.list(all=True, filters=old) == [], 150)
            held = [d for n in NODES for d in node_disks(nodes["token"], n) if d["state"] == "allocated"]
            assert sorted(d["owner"] for d in held) == sorted(m["member_id"] for m in now["members"]), held
        finally:
            user.delete(cluster)
            cluster = wait_settled(user, cluster, ("DESTROYED",), timeout=180)
        for node in NODES:
            left = node_docker(node).containers.list(all=True, filters={"label": f"io.spindle.cluster={cluster['id']}"})
            assert left == [], (node, [c.name for c in left])
        wait_for("every node's disks wiped and free",
                 lambda: all(d["state"] == "free" for n in NODES for d in node_disks(nodes["token"], n)), 120)


def test_the_agent_resources_of_a_node_as_a_real_mesos_agent_would_take_them(nodes):
    """docs/MULTINODE.md shows this document: a real agent's --resources for the node's disks."""
    answer = httpx.get(f"http://127.0.0.1:8083/nodes/{NODES[0]}/mesos-resources", timeout=10,
                       headers={"Authorization": f"Bearer {nodes['token']}", "X-Spindle-Actor": "test",
                                "X-Spindle-Role": "service"}).raise_for_status().json()
    disks = [r for r in answer if r["name"] == "disk"]
    assert len(disks) == 2 and all(r["disk"]["source"]["type"] == "MOUNT" for r in disks), json.dumps(answer)
    assert {r["disk"]["source"]["mount"]["root"] for r in disks} == {
        f"{STATE_DIR}/nodes/{NODES[0]}/disks/disk1", f"{STATE_DIR}/nodes/{NODES[0]}/disks/disk2"}
