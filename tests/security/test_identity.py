"""Identity attacks on the running platform: tokens that expired or were revoked sign nobody in,
nobody but an admin touches another user's tokens, and a user deleted and re-created under the
same name inherits nothing of the old one (a real static-web cluster and job of the first)."""
import time
import uuid

import httpx
import pytest
from sqlalchemy import create_engine, text

from spindle_client.client import SpindleClient, SpindleError
from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import retrying, settled

# One small member (its one disk: static-web serves it): the platform is shared.
SMALL = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}


@pytest.fixture(scope="module")
def admin(database_url):
    with live_user(database_url, "idadmin", is_admin=True) as client:
        yield client


@pytest.fixture
def user(database_url):
    with live_user(database_url, "id") as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def me(token: str) -> httpx.Response:
    return httpx.get(f"{API_URL}/me", headers=bearer(token), timeout=30)


def expire(database_url: str, token_id: int) -> None:
    """Let the token's lifetime pass: its expiry moved into the past, as time would."""
    engine = create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE api.api_tokens SET expires_at = (now() AT TIME ZONE 'UTC') - interval '1 second' "
                          "WHERE id = :id"), {"id": token_id})
    engine.dispose()


def test_an_expired_token_is_401(user, database_url):
    created = user.create_token(expires_in_s=3600)
    assert me(created.token).status_code == 200
    expire(database_url, created.id)
    refused = me(created.token)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "TOKEN_EXPIRED"
    assert me(user.token).status_code == 200  # the user's other token still works


def test_a_revoked_token_is_401_at_once(user):
    created = user.create_token()
    with SpindleClient(API_URL, created.token) as second:
        assert second.me().username == user.username
        user.revoke_token(created.id)
        with pytest.raises(SpindleError) as refused:
            second.me()
    assert refused.value.status == 401 and refused.value.code == "TOKEN_REVOKED"
    assert {t.id: t.revoked_at is not None for t in user.tokens()}[created.id]


def test_nobody_lists_or_revokes_anothers_tokens(user, database_url):
    with live_user(database_url, "idother") as other:
        [theirs] = other.tokens()
        for call in (lambda: user.revoke_token(theirs.id), lambda: user.tokens(other.username),
                     lambda: user.revoke_token(theirs.id, other.username)):
            with pytest.raises(SpindleError) as refused:
                call()
            assert refused.value.status in (403, 404), refused.value
        assert other.me().username == other.username


def test_an_admin_revokes_a_users_token(user, admin):
    [token] = admin.tokens(user.username)
    admin.revoke_token(token.id, user.username)
    refused = me(user.token)
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "TOKEN_REVOKED"


def wait_job(client: SpindleClient, cluster, job_id: str, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while (job := client.job(cluster, job_id))["state"] not in ("SUCCEEDED", "FAILED", "KILLED"):
        assert time.monotonic() < deadline, job
        time.sleep(1)
    return job


def new_user(admin: SpindleClient, name: str) -> tuple[SpindleClient, str]:
    token = retrying(lambda: admin._call("POST", "/admin/users", json={"username": name}))["token"]
    return SpindleClient(API_URL, token, timeout=60), token


def test_a_recreated_user_inherits_nothing_of_the_old_one(admin, tmp_path):
    name = f"idre-{uuid.uuid4().hex[:8]}"
    first, _ = new_user(admin, name)
    cluster = retrying(lambda: first.launch("static-web", "1.0", SMALL))
    try:
        running = settled(first, cluster, ("RUNNING", "FAILED"), timeout=600)
        if running["state"] == "FAILED" and "unreachable" in (running["reason"] or ""):  # a service restarted
            retrying(lambda: first.delete(cluster))
            cluster = retrying(lambda: first.launch("static-web", "1.0", SMALL))
            running = settled(first, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert running["state"] == "RUNNING", (running["reason_code"], running["reason"])
        (tmp_path / "hello.py").write_text("import time\ntime.sleep(3)\nprint('the old owner was here')\n")
        job = retrying(lambda: first.submit(cluster, tmp_path / "hello.py"))
        ended = retrying(lambda: wait_job(first, cluster, job["id"]), timeout=300)
        assert ended["state"] == "SUCCEEDED", (ended["message"], ended["stderr"])
    finally:
        retrying(lambda: first.delete(cluster))
        assert settled(first, cluster, ("DESTROYED",), timeout=300)["state"] == "DESTROYED"
        first.close()
        retrying(lambda: admin._call("DELETE", f"/admin/users/{name}"))
    second, token = new_user(admin, name)
    try:
        assert retrying(lambda: list(second.clusters(name))) == []
        address = f"/clusters/{name}/static-web/1.0/{cluster['id']}"
        for path in (address, f"{address}/events", f"{address}/jobs", f"{address}/jobs/{job['id']}",
                     f"{address}/jobs/{job['id']}/output"):
            answer = httpx.get(API_URL + path, headers=bearer(token), timeout=30)
            while answer.status_code in (502, 503):  # a service restarting meanwhile
                time.sleep(2)
                answer = httpx.get(API_URL + path, headers=bearer(token), timeout=30)
            assert answer.status_code == 404, (path, answer.text)
        with pytest.raises(SpindleError) as refused:
            second.delete(cluster)
        assert refused.value.status == 404
    finally:
        second.close()
        retrying(lambda: admin._call("DELETE", f"/admin/users/{name}"))
    # Admins still see the old cluster: under the name, owned by the old user's id.
    [old] = [c for c in retrying(lambda: list(admin.clusters(name))) if c.id == cluster["id"]]
    assert old.owner == name and old.owner_id is not None
