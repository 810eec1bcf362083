"""Ownership is the user's stable id, not their name (fresh database, the orchestrator's worker not
running): a user deleted and created again under the same name sees nothing of the old one's
clusters, not even through an Idempotency-Key the old one used; deleting a user is not blocked by
a former holder of the name's clusters."""
from sqlalchemy import update

from spindle_common.db import session_factory
from spindle_orchestrator.models import Cluster
from tests.integration.api.conftest import bearer


def launch(api, token, key):
    return api.post("/products/static-web/1.0", json={}, headers={**bearer(token), "Idempotency-Key": key})


def test_a_recreated_name_owns_nothing_of_the_old_user(api, make_user, fresh_database):
    admin = make_user("root-admin", is_admin=True)
    old = make_user("alice")
    first = launch(api, old, "k1").json()
    assert first["owner"] == "alice" and first["owner_id"].startswith("u")
    with session_factory(fresh_database)() as session, session.begin():  # as if it had been destroyed
        session.execute(update(Cluster).where(Cluster.id == first["id"]).values(state="DESTROYED"))
    assert api.delete("/admin/users/alice", headers=bearer(admin)).status_code == 204

    new = api.post("/admin/users", json={"username": "alice"}, headers=bearer(admin)).json()["token"]
    assert api.get("/clusters/alice", headers=bearer(new)).json()["items"] == []
    gone = api.get(f"/clusters/alice/static-web/1.0/{first['id']}", headers=bearer(new))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "CLUSTER_NOT_FOUND"
    assert api.get(f"/clusters/alice/static-web/1.0/{first['id']}/jobs", headers=bearer(new)).status_code == 404
    assert api.delete(f"/clusters/alice/static-web/1.0/{first['id']}", headers=bearer(new)).status_code == 404

    again = launch(api, new, "k1")  # the old user's key: the new user's own launch, not the old cluster
    assert again.status_code == 202 and again.json()["id"] != first["id"]
    assert again.json()["owner_id"] != first["owner_id"]
    assert [c["id"] for c in api.get("/clusters/alice", headers=bearer(new)).json()["items"]] == [again.json()["id"]]
    # Admins see both under the name; each with its owner's id.
    listed = api.get("/clusters/alice", headers=bearer(admin)).json()["items"]
    assert {c["id"]: c["owner_id"] for c in listed} == {first["id"]: first["owner_id"],
                                                         again.json()["id"]: again.json()["owner_id"]}
    # The new alice's live cluster blocks her deletion; the old one's destroyed cluster blocked nothing.
    blocked = api.delete("/admin/users/alice", headers=bearer(admin))
    assert blocked.status_code == 409 and blocked.json()["error"]["details"]["clusters"] == [again.json()["id"]]
