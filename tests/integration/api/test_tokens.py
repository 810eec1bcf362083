"""API tokens of the public API (fresh database): each user lists, creates and revokes their own,
admins anyone's; a revoked or expired token is refused at once, saying why."""
from sqlalchemy import create_engine, text

from tests.integration.api.conftest import bearer


def _expire(database_url: str, token_id: int) -> None:
    """Let the token's lifetime pass (its expiry moved to the past, as time would)."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE api.api_tokens SET expires_at = expires_at - interval '31 days' WHERE id = :id"),
                     {"id": token_id})
    engine.dispose()


def test_a_user_creates_lists_and_revokes_their_tokens(api, make_user):
    first = make_user("alice")
    created = api.post("/me/tokens", json={"expires_in_s": 3600}, headers=bearer(first))
    assert created.status_code == 201, created.text
    new = created.json()
    assert new["token"].startswith(new["prefix"]) and new["revoked_at"] is None
    assert api.get("/me", headers=bearer(new["token"])).json()["username"] == "alice"
    listed = api.get("/me/tokens", headers=bearer(first)).json()
    assert [t["id"] for t in listed] == [new["id"], listed[1]["id"]] and all("token" not in t for t in listed)
    assert listed[0]["expires_at"] < listed[1]["expires_at"]  # an hour, against the 30 days of the first

    assert api.delete(f"/me/tokens/{new['id']}", headers=bearer(first)).status_code == 204
    refused = api.get("/me", headers=bearer(new["token"]))
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "TOKEN_REVOKED"
    assert api.delete(f"/me/tokens/{new['id']}", headers=bearer(first)).status_code == 204  # twice: fine
    assert api.get("/me/tokens", headers=bearer(first)).json()[0]["revoked_at"] is not None


def test_an_expired_token_is_401_token_expired(api, make_user, fresh_database):
    token = make_user("bob")
    [row] = api.get("/me/tokens", headers=bearer(token)).json()
    _expire(fresh_database, row["id"])
    refused = api.get("/me", headers=bearer(token))
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "TOKEN_EXPIRED" and "expired" in refused.json()["error"]["message"]


def test_nobody_touches_anothers_tokens_but_admins(api, make_user):
    alice, bob, admin = make_user("alice"), make_user("bob"), make_user("root-admin", is_admin=True)
    [bobs] = api.get("/me/tokens", headers=bearer(bob)).json()
    gone = api.delete(f"/me/tokens/{bobs['id']}", headers=bearer(alice))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "TOKEN_NOT_FOUND"
    assert api.get("/admin/users/bob/tokens", headers=bearer(alice)).status_code == 403
    assert api.delete(f"/admin/users/bob/tokens/{bobs['id']}", headers=bearer(alice)).status_code == 403
    assert api.get("/me", headers=bearer(bob)).status_code == 200

    assert [t["id"] for t in api.get("/admin/users/bob/tokens", headers=bearer(admin)).json()] == [bobs["id"]]
    # Bob's token under Alice's name is not Alice's token.
    assert api.delete(f"/admin/users/alice/tokens/{bobs['id']}", headers=bearer(admin)).status_code == 404
    assert api.delete(f"/admin/users/bob/tokens/{bobs['id']}", headers=bearer(admin)).status_code == 204
    assert api.get("/me", headers=bearer(bob)).json()["error"]["code"] == "TOKEN_REVOKED"
    assert api.get("/admin/users/nobody/tokens", headers=bearer(admin)).json()["error"]["code"] == "USER_NOT_FOUND"


def test_bad_token_requests_are_4xx_and_create_nothing(api, make_user):
    token = make_user("carol")
    for body in ({"expires_in_s": 59}, {"expires_in_s": "soon"}, {"expires_in_s": 10**30}, {"other": 1}, [1]):
        answer = api.post("/me/tokens", json=body, headers=bearer(token))
        assert answer.status_code == 422, (body, answer.text)
    too_long = api.post("/me/tokens", json={"expires_in_s": 31 * 86400}, headers=bearer(token))
    assert too_long.status_code == 422 and too_long.json()["error"]["code"] == "TOKEN_LIFETIME_TOO_LONG"
    for token_id in ("0", "-1", "x", str(2**31)):
        assert api.delete(f"/me/tokens/{token_id}", headers=bearer(token)).status_code == 422
    assert len(api.get("/me/tokens", headers=bearer(token)).json()) == 1
    assert api.post("/me/tokens", headers=bearer(token)).status_code == 201  # no body: the default lifetime
