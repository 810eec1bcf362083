"""Metrics end to end on the running platform: a static-web member writes 64 MiB to its disk and burns
CPU; its node's ``spindle-member-stats`` pushes the figures into VictoriaMetrics, and the owner reads
them through ``GET …/metrics`` (CPU above zero, the bytes on /data/1, bytes written). Another user
gets 404 for that cluster and 403 for the admin figures, which an admin reads per node; services'
``/metrics`` and the database itself refuse callers without the metrics token."""
import time

import docker
import httpx
import pytest

from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import running_cluster

LAUNCH = {"roles": {"server": {"count": 1, "cpus": 0.25, "disks": {"hdd": 1}}}, "wait_for_resources": True}
WRITE_MIB = 64


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "met") as client:
        yield client


@pytest.fixture(scope="module")
def cluster(owner):
    with running_cluster(owner, "static-web", "1.0", LAUNCH) as running:
        yield running


def get(client, path: str, **params) -> httpx.Response:
    return httpx.get(f"{API_URL}{path}", params=params, headers={"Authorization": f"Bearer {client.token}"},
                     timeout=30)


def cluster_path(cluster: dict) -> str:
    return f"/clusters/{cluster['owner']}/{cluster['product']}/{cluster['version']}/{cluster['id']}"


def latest(answer: dict, figure: str, member: str) -> float:
    values = [s["points"][-1][1] for s in answer["series"] if s["figure"] == figure and s["member"] == member
              and s["points"]]
    return sum(values) if values else -1.0


def peak(answer: dict, figure: str) -> float:
    return max((p[1] for s in answer["series"] if s["figure"] == figure for p in s["points"]), default=0.0)


def test_a_members_work_shows_in_its_clusters_figures(owner, cluster):
    member = cluster["members"][0]
    container = docker.from_env().containers.get(f"spindle-{member['member_id']}")
    wrote = container.exec_run(["sh", "-c", f"dd if=/dev/urandom of=/data/1/blob bs=1M count={WRITE_MIB} "
                                            "conv=fsync 2>&1 && timeout 20 sh -c 'while :; do :; done'; true"])
    assert wrote.exit_code == 0, wrote.output
    deadline, answer = time.monotonic() + 120, {}
    while time.monotonic() < deadline:
        reply = get(owner, f"{cluster_path(cluster)}/metrics", minutes=10, step=15)
        assert reply.status_code == 200, reply.text
        answer = reply.json()
        if (latest(answer, "disk_used", member["member_id"]) >= WRITE_MIB << 20
                and peak(answer, "cpu") > 0.05 and peak(answer, "disk_write") > 0):
            break
        time.sleep(5)
    assert latest(answer, "disk_used", member["member_id"]) >= WRITE_MIB << 20, answer
    assert latest(answer, "disk_size", member["member_id"]) > WRITE_MIB << 20
    assert latest(answer, "memory", member["member_id"]) > 0
    assert peak(answer, "cpu") > 0.05, answer
    # The write reached the member's own disk device: bytes per second above zero while it ran.
    assert peak(answer, "disk_write") > 0, answer
    assert {s["member"] for s in answer["series"]} == {member["member_id"]}  # its own members only
    disk = next(s for s in answer["series"] if s["figure"] == "disk_used")
    assert disk["disk"] == "/data/1" and disk["unit"] == "bytes"


def test_strangers_get_nothing_and_admins_see_the_nodes(database_url, owner, cluster, platform_env):
    with live_user(database_url, "met-other") as stranger, live_user(database_url, "met-adm", is_admin=True) as admin:
        refused = get(stranger, f"{cluster_path(cluster)}/metrics")
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "CLUSTER_NOT_FOUND"
        assert get(stranger, "/admin/metrics").status_code == 403
        assert get(owner, f"{cluster_path(cluster)}/metrics", minutes=10080, step=5).status_code == 422
        nodes = get(admin, "/admin/metrics", minutes=10, step=15)
        assert nodes.status_code == 200, nodes.text
        figures = {(s["figure"], s["node"]) for s in nodes.json()["series"]}
        node = cluster["members"][0]["node"]
        assert {("cpus", node), ("cpus_allocated", node), ("memory", node), ("memory_used", node)} <= figures
        disks = [s for s in nodes.json()["series"] if s["figure"] == "disks" and s["node"] == node]
        assert {s["state"] for s in disks} >= {"allocated"} and all(s["disk_class"] for s in disks)
    # The raw figures are the platform's: services and the database refuse callers without the token.
    assert httpx.get(f"{API_URL}/metrics", timeout=10).status_code == 401
    scraped = httpx.get("http://127.0.0.1:8081/metrics", timeout=10,
                        headers={"Authorization": f"Bearer {platform_env['SPINDLE_METRICS_TOKEN']}"})
    assert scraped.status_code == 200 and "spindle_clusters{" in scraped.text
    database = "http://127.0.0.1:8428/api/v1/query"
    assert httpx.get(database, params={"query": "up"}, timeout=10).status_code == 401
    up = httpx.get(database, params={"query": "up"}, auth=("spindle", platform_env["SPINDLE_METRICS_TOKEN"]),
                   timeout=10).json()
    assert {r["metric"]["instance"] for r in up["data"]["result"] if r["value"][1] == "1"} >= {
        "127.0.0.1:8080", "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083", "127.0.0.1:8084"}
