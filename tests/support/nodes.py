"""Simulated nodes (deploy/node) for tests and benchmarks: a platform whose members run on nodes.

``simulated_nodes(names)`` adds the nodes, stops this machine's own Mesos agent and has the
orchestrator take floating IPs from the `fabric` pool (as a platform whose members run on other
machines); on exit it removes the nodes and puts both back.
"""
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import dns.resolver
import docker
import httpx

from spindle_common.clients import DiskClient
from tests.support.mesos_operator import mesos_operator

REPO = Path(__file__).resolve().parents[2]
STATE_DIR = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
RESOLVER = dns.resolver.Resolver(configure=False)
RESOLVER.nameservers, RESOLVER.port = ["127.0.0.1"], 8600
FABRIC_ADDR = "172.31.250.1"  # deploy/lib/nodes.sh: SPINDLE_FABRIC_ADDR
T = TypeVar("T")

# The simulated nodes of tests/integration/nodes (made once for the run by its conftest.py), and the
# images each holds: those of the products run on them.
NODES = ("n1", "n2", "n3")
# Each node's hdds in tests/integration/nodes: HDFS with HA puts a NameNode, a journal member and a
# DataNode on one node, a disk each.
NODE_HDDS = 3
IMAGES = ("spindle/base:bookworm", "spindle/spark:3.5", "spindle/engine:1.0", "spindle/kafka:4.0",
          "spindle/cassandra:5.0", "spindle/hadoop:3.3")


def sh(*command: str, env: dict | None = None, timeout: float = 600) -> str:
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def deploy_lib(call: str) -> str:
    """One function of deploy/lib, with the platform's environment (as deploy/restart has it)."""
    return sh("bash", "-c", "source deploy/lib/common.sh; for l in services nodes; do source deploy/lib/$l.sh; done;"
              f" set -a; source {STATE_DIR}/spindle.env; set +a; {call}")


def node_docker(node: str) -> docker.DockerClient:
    """The node's own Docker Engine."""
    return docker.DockerClient(base_url=f"unix:///run/spdl/{node}/docker.sock")


def node_container(member: dict):
    """The running container of a cluster member on a simulated node, from that node's Docker Engine."""
    label = f"io.spindle.member={member['member_id']}"
    [container] = node_docker(member["node"]).containers.list(filters={"label": label})
    return container


def agents() -> dict[str, dict]:
    """The master's agents by hostname; an active one wins over older records of the same node."""
    answer = mesos_operator("GET_AGENTS")
    found: dict[str, dict] = {}
    for agent in answer["get_agents"].get("agents", []):
        name = agent["agent_info"]["hostname"]
        if agent.get("active") or name not in found:
            found[name] = agent
    return found


def active(node: str) -> bool:
    return bool(agents().get(node, {}).get("active"))


def wait_for(what: str, check: Callable[[], T], timeout: float = 120, every: float = 0.5) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(every)


# The labels of the disks each simulated node has now (simulated_nodes): a node made before with more
# disks left records of the ones it no longer has, failed for good (their devices are gone).
DISKS_NOW: dict[str, set[str]] = {}


def node_disks(token: str, node: str) -> list[dict[str, Any]]:
    """The node's disks in the inventory (of a simulated node: those it has now)."""
    with DiskClient("http://127.0.0.1:8083", token, actor="test", role="admin") as disks:
        found = disks.request("GET", "/disks", params={"node": node, "page_size": 500})["items"]
    labels = DISKS_NOW.get(node)
    return [d for d in found if labels is None or d["fs_label"] in labels]


def resolved(name: str) -> list[str]:
    """The name's addresses in Consul's DNS ([] while its health check does not pass)."""
    try:
        return [a.address for a in RESOLVER.resolve(name, "A")]
    except dns.resolver.NXDOMAIN:
        return []


def member_page(ip: str) -> str:
    """A static-web member's page, or "" while nothing answers at its address."""
    try:
        return httpx.get(f"http://{ip}:8000/index.html", timeout=3).text
    except httpx.HTTPError:
        return ""


def _token() -> str:
    with open(STATE_DIR / "spindle.env") as env:
        return next(line.split("=", 1)[1].strip() for line in env if line.startswith("SPINDLE_INTERNAL_TOKEN="))


def host_name() -> str:
    return subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()


@contextmanager
def simulated_nodes(names: tuple[str, ...], disks: str = "2:hdd", cpus: str = "1", mem_mb: str = "2048",
                    images: tuple[str, ...] = ("spindle/base:bookworm",)) -> Iterator[None]:
    """The nodes (each with ``disks``, offering ``cpus`` and ``mem_mb``, holding ``images``) are the
    platform's only agents while this lasts; the orchestrator hands out `fabric` IPs and tells job
    drivers to reach it at the fabric address."""
    host = host_name()
    token = _token()
    count = sum(int(part.split(":")[0]) for part in disks.split(","))
    try:
        # side by side: pulling the images is most of a node's start (deploy/node add locks the rest)
        with ThreadPoolExecutor(len(names)) as pool:
            added = [pool.submit(sh, "deploy/node", "add", node, str(i), disks, cpus, mem_mb,
                                 env={"SPINDLE_NODE_IMAGES": " ".join(images)}) for i, node in enumerate(names, 1)]
            for node, done in zip(names, added, strict=True):
                done.result()
                DISKS_NOW[node] = {f"spdl-{node}-{n}" for n in range(1, count + 1)}
        # Disks a previous use of these nodes left failed (below) are wiped by their nodes and used again.
        with DiskClient("http://127.0.0.1:8083", token, actor="test", role="admin") as client:
            for node in names:
                for disk in node_disks(token, node):
                    if disk["state"] == "failed":
                        client.request("POST", f"/disks/{disk['id']}/wipe", json={"reason": "node added again"})
        wait_for("the nodes' disks free", lambda: all(
            d["state"] == "free" for n in names for d in node_disks(token, n)), 120)
        deploy_lib("stop_mesos_agent")
        sh("deploy/restart", "orchestrator", env={"SPINDLE_NETWORK_POOL": "fabric",
                                                  "SPINDLE_PUBLIC_URL": f"http://{FABRIC_ADDR}:8081"})
        wait_for("the nodes' agents in Mesos, this machine's gone",
                 lambda: all(active(n) for n in names) and not active(host), 60)
        yield
    finally:
        # The nodes' wipes end first; then `deploy/node remove` marks each node's disks failed (a
        # removed node's disks must not look free to anyone after it) and the node goes.
        try:
            wait_for("the nodes' disks wiped", lambda: all(
                d["state"] != "wiping" for n in names for d in node_disks(token, n)), 120)
        finally:
            with ThreadPoolExecutor(len(names)) as pool:  # side by side too: each unmounts and deletes its own
                for removed in [pool.submit(sh, "deploy/node", "remove", node) for node in names]:
                    removed.result()
            left = {n: [(d["device_path"], d["state"]) for d in node_disks(token, n) if d["state"] != "failed"]
                    for n in names}
        sh("deploy/restart", "orchestrator")
        deploy_lib("start_mesos_agent")
        assert left == dict.fromkeys(names, []), f"disks of removed nodes not failed: {left}"


def all_disks_free(token: str, nodes: tuple[str, ...]) -> bool:
    """Every disk of these nodes wiped and free (a previous test's are wiped in the background)."""
    return all(d["state"] == "free" for n in nodes for d in node_disks(token, n))


def job_task_node(job: dict) -> str:
    """The node whose Mesos agent ran the job's driver (a Mesos task named for the job)."""
    tasks = mesos_operator("GET_TASKS")["get_tasks"]
    [task] = [t for group in ("tasks", "completed_tasks") for t in tasks.get(group, [])
              if t["name"] == f"job-{job['id']}"]
    [hostname] = [a["agent_info"]["hostname"] for a in mesos_operator("GET_AGENTS")["get_agents"]["agents"]
                  if a["agent_info"]["id"]["value"] == task["agent_id"]["value"]]
    return hostname
