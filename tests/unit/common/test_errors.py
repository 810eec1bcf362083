"""The one error envelope, for every kind of failure a route can have."""
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from spindle_common.errors import ApiError, install_error_handlers


class Body(BaseModel):
    count: int


def make_client() -> TestClient:
    app = FastAPI()
    install_error_handlers(app)

    @app.post("/things")
    def create(body: Body) -> dict:
        if body.count > 3:
            raise ApiError(409, "TOO_MANY", "at most 3 things", {"asked": body.count, "free": 3})
        return {"ok": True}

    @app.get("/boom")
    def boom() -> dict:
        raise RuntimeError("secret internals")

    return TestClient(app, raise_server_exceptions=False)


def test_api_error_keeps_code_message_and_details():
    response = make_client().post("/things", json={"count": 5})
    assert response.status_code == 409
    assert response.json() == {
        "error": {"code": "TOO_MANY", "message": "at most 3 things", "details": {"asked": 5, "free": 3}}
    }


def test_validation_error_names_the_field():
    response = make_client().post("/things", json={"count": "many"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_FAILED"
    assert error["details"]["errors"][0]["field"] == "body.count"


def test_unknown_route_and_method_use_the_envelope():
    client = make_client()
    assert client.get("/nope").json()["error"]["code"] == "NOT_FOUND"
    assert client.delete("/things").json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_unexpected_exception_hides_internals():
    response = make_client().get("/boom")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "INTERNAL"
    assert "secret" not in response.text
