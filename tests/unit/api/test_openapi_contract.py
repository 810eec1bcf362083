"""The api-server's OpenAPI document is its contract: every path parameter has a schema, every
operation documents each error status it can answer (with the envelope), responses are typed, and
bad input never reaches an internal service. No database or service is needed: the signed-in user
is a stand-in and every internal service URL is a closed loopback port (a request that got through
would be a 503)."""
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pydantic import TypeAdapter

from spindle_api.api.deps import current_user
from spindle_api.api.params import segment
from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_api.models import User
from spindle_api.schemas import ClusterEvent, Job, Node, upstream_model
from spindle_api.upstream import UpstreamClient
from spindle_common.contracts import ClusterView
from spindle_common.errors import ApiError

CLOSED = "http://127.0.0.1:9"  # discard: nothing listens there
CLUSTER = "/clusters/alice/spark/3.5/c0123456789"


def make_app():
    return build_app(Settings(consul_url=CLOSED, orchestrator_url=CLOSED, scheduler_url=CLOSED,
                              disk_service_url=CLOSED, network_service_url=CLOSED))


@pytest.fixture(scope="module")
def document() -> dict:
    return make_app().openapi()


def operations(document: dict):
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {path}", path, operation


@pytest.fixture
def client() -> TestClient:
    app = make_app()
    app.dependency_overrides[current_user] = lambda: User(id=1, username="alice", is_admin=True)
    return TestClient(app, raise_server_exceptions=False)


def test_every_path_parameter_is_declared_with_a_constrained_schema(document):
    for label, path, operation in operations(document):
        declared = {p["name"]: p for p in operation.get("parameters", []) if p["in"] == "path"}
        assert set(declared) == {part[1:-1] for part in path.split("/") if part.startswith("{")}, label
        for name, parameter in declared.items():
            schema = parameter["schema"]
            assert parameter["required"] and ("pattern" in schema or "maximum" in schema), (label, name, schema)


def test_every_operation_documents_its_errors_with_the_envelope(document):
    envelope = {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert "HTTPValidationError" not in document["components"]["schemas"]
    for label, path, operation in operations(document):
        responses = operation["responses"]
        errors = {int(s) for s in responses if int(s) >= 400}
        for status in errors:
            assert responses[str(status)]["content"]["application/json"]["schema"] == envelope, (label, status)
        if path == "/metrics":  # the platform's scraper, with its own token
            assert operation["security"] == [{"MetricsToken": []}] and 401 in errors, label
        elif path not in ("/health", "/status"):
            assert operation["security"] == [{"ApiToken": []}] and 401 in errors, label
        if path.startswith("/admin/"):
            assert 403 in errors, label
        if operation.get("parameters") or "requestBody" in operation:
            assert 422 in errors, label
        if "requestBody" in operation:
            assert {400, 413} <= errors, label
        # Users, their tokens and the records of execs are the api-server's own: nothing upstream to fail.
        calls_a_service = (path.startswith(("/clusters", "/admin/", "/capacity"))
                           and label not in ("POST /admin/users", "GET /admin/execs")
                           and not path.endswith(("/tokens", "/tokens/{token_id}")))
        if calls_a_service or label.startswith("POST /products/"):
            assert {502, 503} <= errors, label
        if "{cluster_id}" in path or "{name}" in path or "{disk_id}" in path or "{job_id}" in path:
            assert 404 in errors, label


def test_success_responses_are_typed(document):
    free_form = {"GET /health"}  # the shared skeleton's health answer
    for label, _, operation in operations(document):
        success = [s for s in operation["responses"] if s.startswith("2") and s != "204"]
        assert success or "204" in operation["responses"], label
        for status in success:
            content = operation["responses"][status]["content"]
            schema = (content.get("application/json") or {}).get("schema")
            if schema is None:  # output archives; the scraper's text; a member's log lines (or their stream);
                # an exec's output (NDJSON)
                plain = ({"application/gzip"}, {"text/plain"}, {"text/plain", "text/event-stream"},
                         {"application/x-ndjson"})
                assert set(content) in plain, label
                continue
            if label not in free_form:
                target = schema.get("items", schema)
                assert "$ref" in target, (label, schema)


def test_the_launch_links_to_the_new_cluster(document):
    accepted = document["paths"]["/products/{product}/{version}"]["post"]["responses"]["202"]
    links = accepted["links"]
    assert {"GetCluster", "DeleteCluster", "ClusterEvents"} <= set(links)
    assert links["GetCluster"]["parameters"] == {
        "username": "$response.body#/owner", "product": "$response.body#/product",
        "version": "$response.body#/version", "cluster_id": "$response.body#/id"}
    assert links["DeleteCluster"]["operationRef"] == \
        "#/paths/~1clusters~1{username}~1{product}~1{version}~1{cluster_id}/delete"


@pytest.mark.parametrize("path", [
    f"{CLUSTER[:-11]}c%0A", f"{CLUSTER[:-11]}a%00b/events", f"{CLUSTER[:-11]}%FF/jobs", f"{CLUSTER[:-11]}.a",
    f"{CLUSTER[:-11]}a%20b", f"{CLUSTER}/jobs/j%0D%0A", f"{CLUSTER}/jobs/%7F/output", "/clusters/Al%1Fce",
    "/clusters/alice/spark/3%0A5/c0123456789", "/clusters/alice/sp%00rk/3.5/c0123456789", "/products/spark/3.5%0A",
    "/admin/nodes/node%0A1", "/admin/nodes/%00/mesos-resources", "/admin/ip-pools/po%09ol", "/admin/disks/1x",
    "/admin/disks/99999999999", "/admin/disks/0/transitions", "/admin/users/r%00ot",
    "/clusters/alice?product=%00", "/clusters/alice?page_token=eHx5", "/clusters/alice?state=SLEEPING",
    "/admin/clusters?owner=%00", "/admin/disks?node=%00", "/admin/disks?owner=a%00b",
    "/admin/disks?page_token=ZGlzazo5OTk5OTk5OTk5OTk5OTk5",
])
def test_bad_parameters_are_422_before_anything_is_forwarded(client, path):
    method = "DELETE" if path.startswith("/admin/users/") else "GET"
    response = client.request(method, path)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "VALIDATION_FAILED"


def test_good_parameters_do_reach_the_service(client):
    response = client.get(CLUSTER)
    assert response.status_code == 503 and response.json()["error"]["details"]["service"] == "orchestrator"


def test_wrong_method_is_405_with_allow(client):
    response = client.put(CLUSTER)
    assert response.status_code == 405 and response.headers["allow"] == "DELETE, GET"
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    assert client.post("/admin/disks/1").headers["allow"] == "GET, PATCH"


def test_bodies_are_bounded_and_must_be_json(client):
    big = b'{"x": "' + b"a" * (1 << 20) + b'"}'
    response = client.post("/products/spark/3.5", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and response.json()["error"]["code"] == "REQUEST_TOO_LARGE"
    not_utf8 = client.post("/products/spark/3.5", content=b"\xff\xfe", headers={"Content-Type": "application/json"})
    assert not_utf8.status_code in (400, 422) and "error" in not_utf8.json()
    nan = client.post("/products/spark/3.5", content=b'{"roles": {"worker": {"cpus": NaN}}}',
                      headers={"Content-Type": "application/json"})
    assert nan.status_code == 422 and nan.json()["error"]["code"] == "INVALID_OPTIONS"


def test_upstream_timestamps_become_aware_rfc3339():
    cluster = upstream_model(ClusterView, {
        "id": "c0123456789", "owner": "alice", "product": "spark", "version": "3.5", "state": "PENDING",
        "options": {}, "created_at": "2026-11-23T19:52:47.123456", "updated_at": "2026-11-23T20:52:47+01:00",
        "members": []})
    dumped = cluster.model_dump(mode="json")
    assert dumped["created_at"] == "2026-11-23T19:52:47.123456Z" and dumped["updated_at"] == "2026-11-23T19:52:47Z"
    node = Node.model_validate({"id": 1, "name": "n", "address": "a", "disk_root": "/d", "cpus": None, "mem_mb": None,
                                "created_at": datetime(2026, 1, 2, 3, 4, 5), "rack": None, "failure_domain": "n"})
    assert node.model_dump(mode="json")["created_at"] == "2026-01-02T03:04:05Z"
    job = Job.model_validate({"id": "j1", "cluster_id": "c1", "owner": "alice", "state": "PENDING", "main": "m.py",
                              "args": [], "files": ["m.py"], "message": "", "exit_code": None, "ip": None,
                              "created_at": "2026-01-02T03:04:05", "started_at": None, "finished_at": None})
    assert job.model_dump(mode="json")["created_at"] == "2026-01-02T03:04:05Z"
    event = TypeAdapter(ClusterEvent).validate_python(
        {"seq": 1, "at": "2026-01-02T03:04:05", "step": "accepted", "state": "PENDING", "message": ""})
    assert event.at.tzinfo is not None


def test_an_answer_outside_the_contract_is_a_502():
    with pytest.raises(ApiError) as raised:
        upstream_model(ClusterView, {"id": "c1", "surprise": True})
    assert raised.value.status == 502 and raised.value.code == "BAD_UPSTREAM_ANSWER"


def test_segments_are_percent_encoded_and_dots_refused():
    assert segment("a b/c") == "a%20b%2Fc" and segment(7) == "7"
    for bad in ("", ".", ".."):
        with pytest.raises(ApiError):
            segment(bad)


def test_client_side_url_errors_are_422_not_500():
    client = UpstreamClient("orchestrator", CLOSED, "token", actor="alice")
    for path in ("/clusters/a\nb", "/clusters/\x00", "/clusters/\ud800"):
        with pytest.raises(ApiError) as raised:
            client.request("GET", path)
        assert (raised.value.status, raised.value.code) == (422, "INVALID_REQUEST")
    with pytest.raises(ApiError) as raised:
        client.request("POST", "/clusters", json={"cpus": float("nan")})
    assert raised.value.status == 422
    with pytest.raises(ApiError) as raised:
        client.request("GET", "/clusters")
    assert raised.value.status == 503 and raised.value.details["service"] == "orchestrator"


def test_an_internal_service_failing_is_a_502():
    def failing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": {"code": "INTERNAL", "message": "internal error", "details": {}}})

    client = UpstreamClient("orchestrator", "http://orchestrator", "token", actor="alice")
    client._http = httpx.Client(base_url="http://orchestrator", transport=httpx.MockTransport(failing))
    with pytest.raises(ApiError) as raised:
        client.request("GET", "/clusters")
    assert raised.value.status == 502 and raised.value.details == {"service": "orchestrator", "status": 500,
                                                                   "code": "INTERNAL"}


def test_every_product_of_the_catalog_is_served_in_its_documented_shape(client):
    """A manifest field the answer's model does not know would be a 500 on GET /products/{p}/{v}."""
    listed = client.get("/products")
    assert listed.status_code == 200, listed.text
    products = listed.json()["products"]
    assert len(products) == len(list((Path(__file__).parents[3] / "catalog").glob("*/*/manifest.json")))
    for product in products:
        answer = client.get(product["path"])
        assert answer.status_code == 200, (product["path"], answer.text)
