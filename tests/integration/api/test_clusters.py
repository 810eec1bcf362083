"""Launching, seeing and deleting clusters through the public API, against the real orchestrator API:
202 + Location, idempotency, others' clusters are 404, bad input creates nothing, and the event timeline
as JSON and as a live SSE stream."""
import json
import threading
import time

import httpx
import pytest
from sqlalchemy import update

from spindle_common.db import session_factory
from spindle_orchestrator.clusters import record_event
from spindle_orchestrator.models import Cluster
from tests.integration.api.conftest import bearer
from tests.support.internal import internal_headers


def orchestrator_clusters(orchestrator_url: str, token: str) -> list[dict]:
    """Every cluster the orchestrator holds, asked directly (not through the api-server)."""
    headers = internal_headers(token, "test", "service")
    return httpx.get(f"{orchestrator_url}/clusters", headers=headers).json()["items"]


def launch(api, token, options=None, product="static-web", version="1.0", **headers):
    return api.post(f"/products/{product}/{version}", json=options or {}, headers={**bearer(token), **headers})


def test_launch_is_accepted_with_location_and_resolved_options(api, make_user):
    alice = make_user("alice")
    response = launch(api, alice, {"roles": {"server": {"count": 2}}})
    assert response.status_code == 202
    cluster = response.json()
    assert response.headers["location"] == f"/clusters/alice/static-web/1.0/{cluster['id']}"
    assert cluster["state"] == "PENDING" and cluster["owner"] == "alice"
    assert cluster["options"]["roles"]["server"] == {"count": 2, "cpus": 0.5, "mem_mb": 128}
    shown = api.get(response.headers["location"], headers=bearer(alice))
    assert shown.status_code == 200 and shown.json()["id"] == cluster["id"]


def test_the_same_idempotency_key_gives_the_same_cluster(api, make_user, orchestrator_url, internal_token):
    alice = make_user("alice")
    first = launch(api, alice, **{"Idempotency-Key": "once"}).json()
    again = launch(api, alice, **{"Idempotency-Key": "once"})
    assert again.status_code == 202 and again.json()["id"] == first["id"]
    assert len(orchestrator_clusters(orchestrator_url, internal_token)) == 1


def test_invalid_options_are_422_and_nothing_reaches_the_orchestrator(api, make_user, orchestrator_url, internal_token):
    alice = make_user("alice")
    response = launch(api, alice, {"roles": {"server": {"count": 9}, "db": {}}}, )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "INVALID_OPTIONS"
    assert {e["path"] for e in error["details"]["errors"]} == {"roles", "roles.server.count"}
    assert launch(api, alice, product="flink", version="3").json()["error"]["code"] == "PRODUCT_NOT_FOUND"
    not_an_object = api.post("/products/static-web/1.0", content=b"[1]", headers={**bearer(alice),
                                                                                "Content-Type": "application/json"})
    assert not_an_object.status_code == 422
    assert api.post("/products/static-web/1.0", json={}).status_code == 401
    assert orchestrator_clusters(orchestrator_url, internal_token) == []


def test_others_clusters_are_404_and_admins_see_all(api, make_user):
    alice, bob, admin = make_user("alice"), make_user("bob"), make_user("root-admin", is_admin=True)
    location = launch(api, alice).headers["location"]
    cluster_id = location.rsplit("/", 1)[1]
    for method in ("GET", "DELETE"):
        response = api.request(method, location, headers=bearer(bob))
        assert response.status_code == 404 and response.json()["error"]["code"] == "CLUSTER_NOT_FOUND"
    assert api.get(f"/clusters/bob/static-web/1.0/{cluster_id}", headers=bearer(bob)).status_code == 404
    assert api.get(f"/clusters/alice/spark/3.5/{cluster_id}", headers=bearer(alice)).status_code == 404
    assert api.get("/clusters/alice", headers=bearer(bob)).status_code == 404
    assert api.get(f"{location}/events", headers=bearer(bob)).status_code == 404
    assert api.get("/clusters/bob", headers=bearer(bob)).json()["items"] == []
    assert api.get(location, headers=bearer(admin)).status_code == 200
    assert [c["id"] for c in api.get("/clusters/alice", headers=bearer(admin)).json()["items"]] == [cluster_id]
    launch(api, bob)
    everyone = api.get("/admin/clusters", headers=bearer(admin)).json()["items"]
    assert sorted(c["owner"] for c in everyone) == ["alice", "bob"]
    assert api.get("/admin/clusters", headers=bearer(alice)).status_code == 403


def test_listing_filters_and_pages(api, make_user):
    alice = make_user("alice")
    ids = {launch(api, alice).json()["id"] for _ in range(3)}
    seen, token = [], None
    while True:
        page = api.get("/clusters/alice", params={"page_size": 2, **({"page_token": token} if token else {})},
                       headers=bearer(alice)).json()
        seen += [c["id"] for c in page["items"]]
        token = page["next_page_token"]
        if not token:
            break
    assert sorted(seen) == sorted(ids)
    assert api.get("/clusters/alice", params={"product": "spark"}, headers=bearer(alice)).json()["items"] == []
    assert len(api.get("/clusters/alice", params={"state": "PENDING"}, headers=bearer(alice)).json()["items"]) == 3
    bad = api.get("/clusters/alice", params={"state": "SLEEPING"}, headers=bearer(alice))
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "VALIDATION_FAILED"


def test_delete_is_accepted_and_recorded(api, make_user):
    alice = make_user("alice")
    location = launch(api, alice).headers["location"]
    deleted = api.delete(location, headers=bearer(alice))
    assert deleted.status_code == 202 and deleted.json()["id"] == location.rsplit("/", 1)[1]
    steps = [(e["step"], e["state"]) for e in api.get(f"{location}/events", headers=bearer(alice)).json()]
    assert steps == [("accepted", "PENDING"), ("cluster", "DELETE_REQUESTED")]


def test_events_stream_live_until_the_cluster_settles(api, make_user, fresh_database):
    alice = make_user("alice")
    location = launch(api, alice).headers["location"]
    cluster_id = location.rsplit("/", 1)[1]

    def the_cluster_comes_up():  # what the orchestrator's worker would do, written to its tables
        time.sleep(1.0)
        with session_factory(fresh_database)() as session, session.begin():
            record_event(session, cluster_id, "cluster", "RUNNING", "all members healthy")
            session.execute(update(Cluster).where(Cluster.id == cluster_id).values(state="RUNNING"))

    writer = threading.Thread(target=the_cluster_comes_up)
    writer.start()
    received = []
    with api.stream("GET", f"{location}/events", headers={**bearer(alice), "Accept": "text/event-stream"}) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event:"):
                received.append(line[6:].strip())
            elif line.startswith("data:"):
                received[-1] = (received[-1], json.loads(line[5:]))
    writer.join()
    assert [(kind, data.get("step")) for kind, data in received] == [
        ("event", "accepted"), ("event", "cluster"), ("end", None)]
    assert received[-1][1]["state"] == "RUNNING"


@pytest.mark.parametrize("path", ["/admin/nodes", "/admin/disks", "/admin/ip-pools"])
def test_admin_endpoints_are_403_for_users(api, make_user, path):
    response = api.get(path, headers=bearer(make_user("alice")))
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"


def test_admins_reach_the_inventory_of_the_running_platform(api, make_user):
    admin = bearer(make_user("root-admin", is_admin=True))
    nodes = api.get("/admin/nodes", headers=admin)
    assert nodes.status_code == 200 and nodes.json(), "deploy/up registers this machine as a node"
    disks = api.get("/admin/disks", params={"page_size": 1}, headers=admin).json()
    assert len(disks["items"]) == 1 and "next_page_token" in disks
    assert any(p["name"] == "default" for p in api.get("/admin/ip-pools", headers=admin).json())
    missing = api.get("/admin/ip-pools/no-such-pool", headers=admin)
    assert missing.status_code == 404 and "error" in missing.json()


def test_plan_explains_an_unplaceable_launch_and_holds_nothing(api, make_user, orchestrator_url, internal_token):
    alice = make_user("alice")
    fits = api.post("/products/static-web/1.0/plan", json={}, headers=bearer(alice))
    assert fits.status_code == 200 and fits.json()["placeable"] is True, fits.json()
    assert [m["member_id"] for m in fits.json()["members"]] == ["server-1"]
    too_big = api.post("/products/spark/3.5/plan", json={"roles": {"worker": {"count": 1, "cpus": 16}}},
                       headers=bearer(alice)).json()  # within the default quota, more than this host has
    assert too_big["placeable"] is False and too_big["reasons"][0]["nodes"][0]["constraint"]
    over_quota = api.post("/products/spark/3.5/plan", json={"roles": {"worker": {"count": 64, "cpus": 64}}},
                          headers=bearer(alice))
    assert over_quota.status_code == 403 and over_quota.json()["error"]["details"]["limit"] == "cpus"
    invalid = api.post("/products/spark/3.5/plan", json={"roles": {"worker": {"count": 0}}}, headers=bearer(alice))
    assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "INVALID_OPTIONS"
    assert orchestrator_clusters(orchestrator_url, internal_token) == []
