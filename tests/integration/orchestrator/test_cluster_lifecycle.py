"""The orchestrator's state machine on the real stack (scheduler + embedded Mesos master + executor +
Docker + disk/network services + Consul): a static-web cluster goes PENDING → … → RUNNING with
rendered config, floating IPs, DNS names and dedicated disks, then DESTROYING → DESTROYED with
everything given back."""
import time

import dns.resolver
import httpx
import pytest

from spindle_common import migrations
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.worker import running_worker
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.internal import internal_headers
from tests.support.live_server import serve

RESOLVER = dns.resolver.Resolver(configure=False)
RESOLVER.nameservers, RESOLVER.port = ["127.0.0.1"], 8600


@pytest.fixture
def orchestrator(fresh_database, platform_env):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    settings = Settings(database_url=fresh_database, internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                        consul_url=platform_env["SPINDLE_CONSUL_URL"],
                        scheduler_database_url=platform_env["SPINDLE_DATABASE_URL"])
    app = build_app(settings)
    with running_worker(app), serve(app) as url:
        yield url, internal_headers(settings.internal_token, "api-server", "service")


def wait_state(http, headers, cluster_id, states, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cluster = http.get(f"/clusters/{cluster_id}", headers=headers).json()
        if cluster["state"] in states:
            return cluster
        time.sleep(0.5)
    raise AssertionError(f"cluster stuck in {cluster['state']}: {cluster}")


def check_running(http, headers, cluster_id: str) -> list[dict]:
    """The cluster reaches RUNNING with rendered config, floating IPs, DNS names and disks."""
    cluster = wait_state(http, headers, cluster_id, ("RUNNING", "FAILED"))
    assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
    members = cluster["members"]
    assert [m["member_id"] for m in members] == [f"{cluster_id}-server-1", f"{cluster_id}-server-2"]
    ips = [m["ip"] for m in members]
    for member, ip in zip(members, ips, strict=True):
        assert member["state"] == "TASK_RUNNING" and len(member["disks"]) == 1
        label = member["member_id"].removeprefix(cluster_id + "-")
        assert member["dns_name"] == f"{label}.{cluster_id}.service.spindle"
        assert [r.to_text() for r in RESOLVER.resolve(member["dns_name"], "A")] == [ip]
        page = httpx.get(f"http://{ip}:8000/index.html", timeout=5).text  # rendered config, peers' IPs
        assert f"of {cluster_id}</h1>" in page and all(peer in page for peer in ips)
    steps = [e["state"] for e in http.get(f"/clusters/{cluster_id}/events", headers=headers).json()
             if e["step"] == "cluster"]
    assert steps == ["SCHEDULING", "DEPLOYING", "CONFIGURING", "RUNNING"]
    return members


def test_static_web_cluster_runs_and_is_destroyed_without_leftovers(orchestrator, platform_env):
    url, headers = orchestrator
    with httpx.Client(base_url=url, timeout=30) as http:
        created = http.post("/clusters", headers=headers, json={
            "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0",
            "options": {"roles": {"server": {"count": 2}}}})
        assert created.status_code == 202
        cluster_id = created.json()["id"]
        try:
            check_running(http, headers, cluster_id)
        finally:  # whatever failed above, the platform must not keep this test's containers, disks, IPs
            assert http.delete(f"/clusters/{cluster_id}", headers=headers).status_code == 202
            final = wait_state(http, headers, cluster_id, ("DESTROYED",))
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)
