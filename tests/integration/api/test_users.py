"""API tokens authenticate users; only admins create users; bad input changes nothing."""
from sqlalchemy import create_engine, text

from tests.integration.api.conftest import bearer


def test_admin_creates_a_user_whose_token_works(api, make_user):
    admin = make_user("root-admin", is_admin=True)
    created = api.post("/admin/users", json={"username": "alice"}, headers=bearer(admin))
    assert created.status_code == 201
    body = created.json()
    assert body["username"] == "alice" and body["is_admin"] is False and body["token"].startswith("spd_")
    assert api.get("/me", headers=bearer(body["token"])).json() == {"username": "alice", "is_admin": False}


def test_tokens_are_stored_hashed(api, make_user, fresh_database):
    token = make_user("bob")
    engine = create_engine(fresh_database)
    with engine.connect() as conn:
        stored = conn.execute(text("SELECT token_hash, prefix FROM api.api_tokens")).one()
    engine.dispose()
    assert token not in stored.token_hash and len(stored.token_hash) == 64 and token.startswith(stored.prefix)


def test_missing_or_unknown_token_is_401(api):
    for headers in ({}, {"Authorization": "Basic abc"}, bearer("spd_nope")):
        response = api.get("/me", headers=headers)
        assert response.status_code == 401 and response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_non_admin_gets_403_and_nothing_is_created(api, make_user, fresh_database):
    user = make_user("carol")
    response = api.post("/admin/users", json={"username": "mallory", "is_admin": True}, headers=bearer(user))
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"
    assert _usernames(fresh_database) == {"carol"}


def test_bad_username_and_duplicate_are_rejected_without_change(api, make_user, fresh_database):
    admin = make_user("root-admin", is_admin=True)
    bad = api.post("/admin/users", json={"username": "Bad Name!"}, headers=bearer(admin))
    assert bad.status_code == 422 and bad.json()["error"]["details"]["errors"][0]["field"] == "body.username"
    assert api.post("/admin/users", json={"username": "dave"}, headers=bearer(admin)).status_code == 201
    again = api.post("/admin/users", json={"username": "dave"}, headers=bearer(admin))
    assert again.status_code == 409 and again.json()["error"]["code"] == "USER_EXISTS"
    assert _usernames(fresh_database) == {"root-admin", "dave"}


def _usernames(url: str) -> set[str]:
    engine = create_engine(url)
    with engine.connect() as conn:
        names = set(conn.execute(text("SELECT username FROM api.users")).scalars())
    engine.dispose()
    return names


def test_admins_delete_users_without_live_clusters_and_nothing_else(api, make_user):
    admin, alice, bob = make_user("root-admin", is_admin=True), make_user("alice"), make_user("bob")
    assert api.post("/products/static-web/1.0", json={}, headers=bearer(bob)).status_code == 202

    assert api.delete("/admin/users/alice", headers=bearer(bob)).status_code == 403
    refused = api.delete("/admin/users/bob", headers=bearer(admin))
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "USER_HAS_CLUSTERS"
    assert api.get("/me", headers=bearer(bob)).status_code == 200, "a refused delete changes nothing"
    assert api.delete("/admin/users/root-admin", headers=bearer(admin)).json()["error"]["code"] == "CANNOT_DELETE_SELF"
    assert api.delete("/admin/users/nobody", headers=bearer(admin)).status_code == 404

    assert api.delete("/admin/users/alice", headers=bearer(admin)).status_code == 204
    assert api.get("/me", headers=bearer(alice)).status_code == 401, "the deleted user's token is gone with them"
