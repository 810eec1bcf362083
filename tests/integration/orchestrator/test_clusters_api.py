"""The orchestrator's cluster API on a fresh database (worker not running): create, idempotency,
listing pages, events, delete request, bad input, and a read that a commit cannot split."""
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event
from sqlalchemy.orm import Session

from spindle_common import migrations
from spindle_common.db import get_engine
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster, Member
from tests.support.internal import internal_headers

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")


@pytest.fixture
def api(fresh_database):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    return TestClient(build_app(Settings(database_url=fresh_database, internal_token=TOKEN)))


def launch(api, owner="alice", key=None, options=None):
    body = {"owner": owner, "owner_id": owner, "product": "static-web", "version": "1.0", "options": options or {},
            "idempotency_key": key}
    return api.post("/clusters", json=body, headers=AS_API)


def test_create_is_accepted_pending_with_an_event(api):
    response = launch(api)
    assert response.status_code == 202
    cluster = response.json()
    assert cluster["state"] == "PENDING" and cluster["owner"] == "alice" and cluster["id"].startswith("c")
    events = api.get(f"/clusters/{cluster['id']}/events", headers=AS_API).json()
    assert [(e["step"], e["state"]) for e in events] == [("accepted", "PENDING")]


def test_idempotency_key_returns_the_same_cluster(api):
    first = launch(api, key="k1")
    again = launch(api, key="k1")
    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["id"] == again.json()["id"]
    assert launch(api, owner="bob", key="k1").json()["id"] != first.json()["id"], "keys are per owner"
    reused = launch(api, key="k1", options={"roles": {"server": {"count": 2}}})
    assert reused.status_code == 409 and reused.json()["error"]["code"] == "IDEMPOTENCY_KEY_REUSED"


def test_listing_pages_through_every_cluster_once(api):
    ids = {launch(api).json()["id"] for _ in range(5)}
    launch(api, owner="bob")
    seen, token = [], None
    while True:
        page = api.get("/clusters", headers=AS_API,
                       params={"owner": "alice", "page_size": 2, **({"page_token": token} if token else {})}).json()
        seen += [c["id"] for c in page["items"]]
        token = page["next_page_token"]
        if not token:
            break
    assert sorted(seen) == sorted(ids) and len(seen) == 5


def test_delete_is_recorded_and_bad_input_is_refused(api):
    cluster_id = launch(api).json()["id"]
    assert api.delete(f"/clusters/{cluster_id}", headers=AS_API).status_code == 202
    steps = [e["state"] for e in api.get(f"/clusters/{cluster_id}/events", headers=AS_API).json()]
    assert steps[-1] == "DELETE_REQUESTED"
    assert api.get("/clusters/cnope", headers=AS_API).json()["error"]["code"] == "CLUSTER_NOT_FOUND"
    assert api.get("/clusters", params={"state": "SLEEPING"}, headers=AS_API).status_code == 422
    bad_token = api.get("/clusters", params={"page_token": "garbage"}, headers=AS_API)
    assert bad_token.json()["error"]["code"] == "INVALID_PAGE_TOKEN"
    assert launch(api, owner="").status_code == 422
    assert api.post("/clusters", json={}, headers=internal_headers(TOKEN, "x", "user")).status_code == 403


def test_a_cluster_read_while_a_resize_commits_shows_one_moment(api, fresh_database):
    """GET reads the cluster's row, then its members with a second SELECT. A resize committing between
    the two (its state RESIZING and a member with an IP but no disks yet, as the worker's round writes
    them) is not seen half: the answer is the cluster as it was, RUNNING with its one member. Under
    READ COMMITTED it was RUNNING with the new member (the project CI's resize test failure)."""
    cluster_id = launch(api).json()["id"]
    engine = get_engine(fresh_database)

    def member(index: int, state: str, disks: list[dict]) -> Member:
        return Member(member_id=f"{cluster_id}-server-{index}", cluster_id=cluster_id, role="server", index=index,
                      state=state, ip=f"10.0.0.{index}", disks=disks)

    with Session(engine) as session, session.begin():
        session.get(Cluster, cluster_id).state = "RUNNING"
        session.add(member(1, "TASK_RUNNING", [{"container_path": "/data/1", "mount_point": "/mnt/d1", "id": 1}]))
    resized = []

    def resize_commits(conn, cursor, statement, *_):
        if not resized and statement.lstrip().startswith("SELECT") and "orchestrator.members" in statement:
            resized.append(True)
            with Session(engine) as other, other.begin():
                other.get(Cluster, cluster_id).state = "RESIZING"
                other.add(member(2, "PENDING", []))

    event.listen(engine, "before_cursor_execute", resize_commits)
    try:
        seen = api.get(f"/clusters/{cluster_id}", headers=AS_API).json()
    finally:
        event.remove(engine, "before_cursor_execute", resize_commits)
    assert resized, "the resize committed while the read was under way"
    assert (seen["state"], [m["member_id"] for m in seen["members"]]) == ("RUNNING", [f"{cluster_id}-server-1"])
    after = api.get(f"/clusters/{cluster_id}", headers=AS_API).json()
    assert (after["state"], len(after["members"])) == ("RESIZING", 2), "the next read sees the resize whole"
