"""Internal callers must present the platform token and an identity signed with the identity key
(actor, role, expiry); the role comes from that identity alone and must be one the route allows."""
import time
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

from spindle_common.auth import (
    IDENTITY_HEADER,
    Caller,
    caller_dependency,
    internal_headers,
    require_own_node,
    sign_identity,
    verify_identity,
)
from spindle_common.errors import ApiError, install_error_handlers
from tests.support.internal import forged_headers

TOKEN = "s3cret"
KEY = "identity-key"
NOW = 1_800_000_000


@pytest.fixture
def client() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/admin-only")
    def admin_only(caller: Annotated[Caller, Depends(caller_dependency(TOKEN, "admin", identity_key=KEY))]) -> dict:
        return {"actor": caller.actor}

    return TestClient(app)


def test_admin_passes(client):
    response = client.get("/admin-only", headers=internal_headers(TOKEN, "alice", "admin", KEY))
    assert response.status_code == 200 and response.json() == {"actor": "alice"}


def test_forged_identities_are_401(client, monkeypatch):
    monkeypatch.setenv("SPINDLE_IDENTITY_KEY", KEY)  # forged_headers signs its "right" ones with the env's key
    for headers in forged_headers(TOKEN, "mallory", "admin"):
        response = client.get("/admin-only", headers=headers)
        assert response.status_code == 401, headers
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("headers", [{}, internal_headers("wrong", "alice", "admin", KEY),
                                     {"Authorization": f"Bearer {TOKEN}", "X-Spindle-Role": "admin"},
                                     internal_headers(TOKEN, "alice", "admin", "another-key")])
def test_missing_or_bad_credentials_are_401(client, headers):
    response = client.get("/admin-only", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_wrong_role_is_403(client):
    response = client.get("/admin-only", headers=internal_headers(TOKEN, "bob", "user", KEY))
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "FORBIDDEN", "message": "this action needs role admin", "details": {"role": "user"}
    }


@pytest.mark.parametrize("actor", ["u42", "executor of job-j1 on n1", "a;b;c", "ünï", "x" * 300])
def test_any_actor_round_trips(actor):
    assert verify_identity(KEY, sign_identity(KEY, actor, "service", NOW + 1), NOW) == Caller(actor, "service")


GOOD = sign_identity(KEY, "alice", "user", NOW + 60)


@pytest.mark.parametrize("value, problem", [
    (None, "required"),
    ("", "required"),
    ("alice;admin", "not a signed identity"),
    ("v2" + GOOD[2:], "not a signed identity"),
    (GOOD.replace(";user;", ";admin;"), "not signed"),  # the role changed after signing
    (GOOD.replace(";alice;", ";bob;"), "not signed"),
    (GOOD[:-1] + ("0" if GOOD[-1] != "0" else "1"), "not signed"),
    (sign_identity("other", "alice", "user", NOW + 60), "not signed"),
    (sign_identity(KEY, "alice", "root", NOW + 60), "no valid actor"),  # type: ignore[arg-type]
    (sign_identity(KEY, "", "user", NOW + 60), "no valid actor"),
    (sign_identity(KEY, "alice", "user", NOW), "expired"),
    (sign_identity(KEY, "alice", "user", NOW - 3600), "expired"),
])
def test_bad_identities_are_refused_saying_why(value, problem):
    with pytest.raises(ApiError) as refused:
        verify_identity(KEY, value, NOW)
    assert refused.value.status == 401 and problem in refused.value.message


def test_headers_carry_the_token_and_a_fresh_identity():
    headers = internal_headers(TOKEN, "orchestrator", "service", KEY, ttl_s=60)
    assert headers["Authorization"] == f"Bearer {TOKEN}" and set(headers) == {"Authorization", IDENTITY_HEADER}
    assert verify_identity(KEY, headers[IDENTITY_HEADER], time.time()).role == "service"
    assert headers != internal_headers(TOKEN, "orchestrator", "user", KEY, ttl_s=60)


NODE_KEY = "node-key"


@pytest.mark.parametrize("key, role, accepted", [
    (NODE_KEY, "node", True),
    (KEY, "node", False),  # a node identity is signed with the nodes' key, nothing else
    (NODE_KEY, "admin", False),  # the nodes' key signs no other role
    (NODE_KEY, "service", False),
    (NODE_KEY, "user", False),
    (KEY, "service", True),
])
def test_the_nodes_key_signs_role_node_only(key, role, accepted):
    value = sign_identity(key, "node-agent/n1", role, NOW + 60)
    try:
        caller = verify_identity(KEY, value, NOW, NODE_KEY)
    except ApiError as exc:
        assert not accepted and exc.status == 401
    else:
        assert accepted and caller == Caller("node-agent/n1", role)


def test_where_nodes_are_not_configured_a_node_identity_is_refused():
    with pytest.raises(ApiError) as refused:
        verify_identity(KEY, sign_identity(NODE_KEY, "node-agent/n1", "node", NOW + 60), NOW)
    assert refused.value.status == 401


@pytest.mark.parametrize("caller, node, allowed", [
    (Caller("node-agent/n1", "node"), "n1", True),
    (Caller("mesos-agent/n1", "node"), "n1", True),
    (Caller("node-agent/n1", "node"), "n2", False),
    (Caller("node-agent/n10", "node"), "n1", False),
    (Caller("n1", "node"), "n1", True),
    (Caller("deploy", "admin"), "n2", True),  # admins and services act for any node
    (Caller("scheduler", "service"), "n2", True),
])
def test_a_node_acts_only_for_itself(caller, node, allowed):
    try:
        require_own_node(caller, node)
    except ApiError as exc:
        assert not allowed and exc.status == 403
    else:
        assert allowed
