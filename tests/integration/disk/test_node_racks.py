"""Nodes' racks (failure domains) at disk-service against real PostgreSQL: what a rack may be, an
admin's PATCH that sets or clears it and changes nothing else, registrations that keep it, every
node's failure domain (its rack, or itself), and ``DiskClient.failure_domains`` as the scheduler
calls it."""
import httpx
import pytest
from disk_helpers import ADMIN, SERVICE, TOKEN, USER

from spindle_common.clients import DiskClient
from tests.support.internal import internal_headers

NODE = {"name": "n1", "address": "10.0.0.1", "disk_root": "/srv/spindle/n1"}


def register(api, name: str, **extra) -> dict:
    response = api.post("/nodes", json={**NODE, "name": name, "disk_root": f"/srv/spindle/{name}", **extra},
                        headers=ADMIN)
    assert response.status_code == 201, response.text
    return response.json()


def refused(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code, response.text
    return response.json()["error"]


def rack_of(api, name: str) -> tuple[str | None, str]:
    node = api.get(f"/nodes/{name}", headers=ADMIN).json()
    return node["rack"], node["failure_domain"]


RACKS = [
    ("r1", True),
    ("rack-1.a_b", True),
    ("0", True),
    ("a" * 63, True),
    ("", False),
    ("R1", False),
    ("-a", False),
    (".a", False),
    ("a" * 64, False),
    ("rack 1", False),
    ("rack/1", False),
    ("r1\n", False),
]


@pytest.mark.parametrize(("rack", "valid"), RACKS)
def test_a_rack_is_a_lowercase_name_when_registering(api, rack, valid):
    response = api.post("/nodes", json={**NODE, "rack": rack}, headers=ADMIN)
    if valid:
        assert response.status_code == 201, response.text
        assert (response.json()["rack"], response.json()["failure_domain"]) == (rack, rack)
    else:
        error = refused(response, 422, "VALIDATION_FAILED")
        assert [e["field"] for e in error["details"]["errors"]] == ["body.rack"]
        assert api.get("/nodes", headers=ADMIN).json() == []


@pytest.mark.parametrize(("rack", "valid"), RACKS)
def test_a_rack_is_a_lowercase_name_when_set(api, rack, valid):
    register(api, "n1", rack="before")
    response = api.patch("/nodes/n1", json={"rack": rack}, headers=ADMIN)
    if valid:
        assert response.status_code == 200, response.text
        assert rack_of(api, "n1") == (rack, rack)
    else:
        error = refused(response, 422, "VALIDATION_FAILED")
        assert [e["field"] for e in error["details"]["errors"]] == ["body.rack"]
        assert rack_of(api, "n1") == ("before", "before")


def test_an_admin_sets_and_clears_a_rack_and_nothing_else_changes(api):
    created = register(api, "n1", cpus=4, mem_mb=8192)
    assert (created["rack"], created["failure_domain"]) == (None, "n1")
    put = api.patch("/nodes/n1", json={"rack": "r1"}, headers=ADMIN)
    assert put.status_code == 200, put.text
    assert put.json() == {**created, "rack": "r1", "failure_domain": "r1"}
    assert api.get("/nodes/n1", headers=ADMIN).json() == put.json()
    cleared = api.patch("/nodes/n1", json={"rack": None}, headers=ADMIN)
    assert cleared.status_code == 200 and cleared.json() == created


@pytest.mark.parametrize(("path", "body", "headers", "status", "code"), [
    pytest.param("/nodes/ghost", {"rack": "r1"}, ADMIN, 404, "NODE_NOT_FOUND", id="unknown node"),
    pytest.param("/nodes/n1", {"rack": "r2", "address": "10.9.9.9"}, ADMIN, 422, "VALIDATION_FAILED",
                 id="another field too"),
    pytest.param("/nodes/n1", {"rack": "r2", "name": "n9"}, ADMIN, 422, "VALIDATION_FAILED", id="a rename"),
    pytest.param("/nodes/n1", {"address": "10.9.9.9"}, ADMIN, 422, "VALIDATION_FAILED", id="only another field"),
    pytest.param("/nodes/n1", {}, ADMIN, 422, "VALIDATION_FAILED", id="no rack"),
    pytest.param("/nodes/n1", {"rack": 7}, ADMIN, 422, "VALIDATION_FAILED", id="not a string"),
    pytest.param("/nodes/n1", {"rack": "r2"}, SERVICE, 403, "FORBIDDEN", id="a service"),
    pytest.param("/nodes/n1", {"rack": "r2"}, USER, 403, "FORBIDDEN", id="a user"),
    pytest.param("/nodes/n1", {"rack": "r2"}, internal_headers(TOKEN, "node-agent/n1", "node"), 403, "FORBIDDEN",
                 id="the node itself"),
    pytest.param("/nodes/n1", {"rack": "r2"}, {**ADMIN, "Authorization": "Bearer wrong"}, 401, "UNAUTHENTICATED",
                 id="a wrong token"),
])
def test_a_refused_change_changes_nothing(api, path, body, headers, status, code):
    before = register(api, "n1", rack="r1")
    refused(api.patch(path, json=body, headers=headers), status, code)
    assert api.get("/nodes", headers=ADMIN).json() == [before]


def test_registering_again_keeps_the_rack_an_admin_set(api):
    register(api, "n1")
    api.patch("/nodes/n1", json={"rack": "r1"}, headers=ADMIN)
    # deploy/up and the node agent register without a rack: the node stays where the admin put it
    again = api.post("/nodes", json=NODE, headers=ADMIN)
    assert again.status_code == 200 and again.json()["rack"] == "r1"
    assert api.post("/nodes", json={**NODE, "rack": "r1"}, headers=ADMIN).status_code == 200
    refused(api.post("/nodes", json={**NODE, "rack": "r2"}, headers=ADMIN), 409, "NODE_EXISTS")
    assert rack_of(api, "n1") == ("r1", "r1")


def test_every_node_has_a_failure_domain_its_rack_or_itself(api):
    register(api, "n1", rack="r1")
    register(api, "n2", rack="r1")
    register(api, "n3")
    listed = api.get("/nodes", headers=SERVICE)  # the scheduler reads them for placement
    assert listed.status_code == 200, listed.text
    assert [(n["name"], n["rack"], n["failure_domain"]) for n in listed.json()] == [
        ("n1", "r1", "r1"), ("n2", "r1", "r1"), ("n3", None, "n3")]
    refused(api.get("/nodes", headers=internal_headers(TOKEN, "node-agent/n1", "node")), 403, "FORBIDDEN")


def test_disk_client_failure_domains(live_url):
    with DiskClient(live_url, TOKEN, "scheduler") as disks, httpx.Client(base_url=live_url, timeout=60) as admin:
        assert disks.failure_domains() == {}
        for name, rack in (("n1", "r1"), ("n2", "r2"), ("n3", None), ("n4", "r1")):
            register(admin, name, rack=rack)
        assert disks.failure_domains() == {"n1": "r1", "n2": "r2", "n3": "n3", "n4": "r1"}
        admin.patch("/nodes/n1", json={"rack": None}, headers=ADMIN)
        assert disks.failure_domains()["n1"] == "n1"
