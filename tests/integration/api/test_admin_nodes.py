"""The admin node routes in front of a disk-service of their own (one fresh database, so the running
platform's inventory is never touched): register a node with a rack, set and clear it with PATCH,
the rack and failure domain in every answer; only admins may."""
import pytest
from fastapi.testclient import TestClient

from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_common import migrations
from spindle_disk.core.config import Settings as DiskSettings
from spindle_disk.main import build_app as build_disk_service
from tests.integration.api.conftest import bearer
from tests.support.live_server import serve

CLOSED = "http://127.0.0.1:9"  # discard: nothing listens there
NODE = {"name": "n1", "address": "10.0.0.1", "disk_root": "/srv/spindle/n1"}


@pytest.fixture
def api(fresh_database, internal_token, state_dir):
    """The api-server (TestClient) with disk-service's real app behind it on loopback."""
    for package in ("spindle_api", "spindle_disk"):
        migrations.upgrade(package, fresh_database)
    disk_service = build_disk_service(DiskSettings(database_url=fresh_database, internal_token=internal_token,
                                                   local_node_addresses=[]), resume_wipes=False)
    with serve(disk_service) as disk_url:
        yield TestClient(build_app(Settings(
            database_url=fresh_database, consul_url=CLOSED, orchestrator_url=CLOSED, scheduler_url=CLOSED,
            network_service_url=CLOSED, disk_service_url=disk_url, internal_token=internal_token,
            state_dir=state_dir)))
    disk_service.state.wiper.shutdown()


def test_an_admin_registers_a_node_in_a_rack_then_moves_and_clears_it(api, make_user):
    admin = bearer(make_user("root-admin", is_admin=True))
    created = api.post("/admin/nodes", json={**NODE, "rack": "r1"}, headers=admin)
    assert created.status_code == 201, created.text
    assert (created.json()["rack"], created.json()["failure_domain"]) == ("r1", "r1")
    moved = api.patch("/admin/nodes/n1", json={"rack": "r2"}, headers=admin)
    assert moved.status_code == 200 and moved.json() == {**created.json(), "rack": "r2", "failure_domain": "r2"}
    assert api.get("/admin/nodes/n1", headers=admin).json() == moved.json()
    cleared = api.patch("/admin/nodes/n1", json={"rack": None}, headers=admin)
    assert cleared.status_code == 200 and (cleared.json()["rack"], cleared.json()["failure_domain"]) == (None, "n1")
    assert api.get("/admin/nodes", headers=admin).json() == [cleared.json()]


@pytest.mark.parametrize(("path", "body", "status", "code"), [
    pytest.param("/admin/nodes/ghost", {"rack": "r2"}, 404, "NODE_NOT_FOUND", id="unknown node"),
    pytest.param("/admin/nodes/n1", {"rack": "R2"}, 422, "VALIDATION_FAILED", id="uppercase"),
    pytest.param("/admin/nodes/n1", {"rack": ""}, 422, "VALIDATION_FAILED", id="empty"),
    pytest.param("/admin/nodes/n1", {"rack": "a" * 64}, 422, "VALIDATION_FAILED", id="too long"),
    pytest.param("/admin/nodes/n1", {"rack": "r2", "address": "10.9.9.9"}, 422, "VALIDATION_FAILED",
                 id="another field too"),
    pytest.param("/admin/nodes/n1", {}, 422, "VALIDATION_FAILED", id="no rack"),
    pytest.param("/admin/nodes/n%0A1", {"rack": "r2"}, 422, "VALIDATION_FAILED", id="not a node name"),
])
def test_a_refused_change_changes_nothing(api, make_user, path, body, status, code):
    admin = bearer(make_user("root-admin", is_admin=True))
    before = api.post("/admin/nodes", json={**NODE, "rack": "r1"}, headers=admin).json()
    refused = api.patch(path, json=body, headers=admin)
    assert refused.status_code == status and refused.json()["error"]["code"] == code, refused.text
    assert api.get("/admin/nodes", headers=admin).json() == [before]


def test_only_admins_set_racks(api, make_user):
    admin = bearer(make_user("root-admin", is_admin=True))
    before = api.post("/admin/nodes", json=NODE, headers=admin).json()
    alice = bearer(make_user("alice"))
    for method, path, body in (("PATCH", "/admin/nodes/n1", {"rack": "r1"}), ("GET", "/admin/nodes", None),
                               ("GET", "/admin/nodes/n1", None), ("POST", "/admin/nodes", {**NODE, "rack": "r1"})):
        refused = api.request(method, path, json=body, headers=alice)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "FORBIDDEN", (method, path)
    anonymous = api.patch("/admin/nodes/n1", json={"rack": "r1"})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "UNAUTHENTICATED"
    assert api.get("/admin/nodes", headers=admin).json() == [before]
