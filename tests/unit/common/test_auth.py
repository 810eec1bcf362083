"""Internal callers must present the platform token and a role allowed for the route."""
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI
from fastapi.testclient import TestClient

from spindle_common.auth import Caller, caller_dependency, internal_headers
from spindle_common.errors import install_error_handlers

TOKEN = "s3cret"


@pytest.fixture
def client() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/admin-only")
    def admin_only(caller: Annotated[Caller, Depends(caller_dependency(TOKEN, "admin"))]) -> dict:
        return {"actor": caller.actor}

    return TestClient(app)


def test_admin_passes(client):
    response = client.get("/admin-only", headers=internal_headers(TOKEN, "alice", "admin"))
    assert response.status_code == 200 and response.json() == {"actor": "alice"}


@pytest.mark.parametrize("headers", [{}, internal_headers("wrong", "alice", "admin"),
                                     {"Authorization": f"Bearer {TOKEN}", "X-Spindle-Role": "admin"},
                                     internal_headers(TOKEN, "alice", "root")])  # type: ignore[arg-type]
def test_missing_or_bad_credentials_are_401(client, headers):
    response = client.get("/admin-only", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_wrong_role_is_403(client):
    response = client.get("/admin-only", headers=internal_headers(TOKEN, "bob", "user"))
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "FORBIDDEN", "message": "this action needs role admin", "details": {"role": "user"}
    }
