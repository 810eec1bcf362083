"""The one error envelope, for every kind of failure a route can have."""
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import BaseModel

from spindle_common.errors import ERROR_DESCRIPTIONS, ApiError, ErrorEnvelope, error_responses, install_error_handlers


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


def test_wrong_method_is_405_with_allow_naming_every_route_at_the_path():
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/things/{name}")
    def show(name: str) -> dict:
        return {}

    @app.delete("/things/{name}")
    def remove(name: str) -> dict:
        return {}

    response = TestClient(app).put("/things/x")
    assert response.status_code == 405
    assert response.headers["allow"] == "DELETE, GET"
    assert response.json()["error"] == {"code": "METHOD_NOT_ALLOWED",
                                        "message": "PUT is not allowed here; use DELETE, GET",
                                        "details": {"method": "PUT", "allow": ["DELETE", "GET"]}}


def test_error_responses_document_the_envelope():
    responses = error_responses(401, 404, descriptions={404: "no such thing"})
    assert responses == {401: {"model": ErrorEnvelope, "description": ERROR_DESCRIPTIONS[401]},
                         404: {"model": ErrorEnvelope, "description": "no such thing"}}
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/things/{name}", responses=error_responses(404, 422))
    def show(name: str) -> dict:
        raise ApiError(404, "NO_THING", "no such thing", {"name": name})

    document = app.openapi()
    operation = document["paths"]["/things/{name}"]["get"]
    for status in ("404", "422"):
        assert operation["responses"][status]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorEnvelope"}
    assert "HTTPValidationError" not in document["components"]["schemas"]
    body = TestClient(app).get("/things/x").json()
    assert ErrorEnvelope.model_validate(body).error.code == "NO_THING"


def test_error_responses_refuse_descriptions_of_statuses_not_listed():
    with pytest.raises(ValueError):
        error_responses(401, descriptions={404: "nothing"})
