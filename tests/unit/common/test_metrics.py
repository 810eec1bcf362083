"""GET /metrics of every service (spindle_common.metrics): requests counted by route template and
status (ids never become labels), timed to the last byte of a stream, the token required, and each
app with its own registry."""
import pytest
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
from fastapi.testclient import TestClient
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from spindle_common.errors import ApiError, install_error_handlers
from spindle_common.metrics import install_metrics

TOKEN = "metrics-token-for-tests"


class Disks:
    """A collector read at scrape time, as a service's figures from its tables are."""

    def __init__(self):
        self.free = 3

    def collect(self):
        gauge = GaugeMetricFamily("spindle_disks", "disks by state", labels=["state"])
        gauge.add_metric(["free"], self.free)
        yield gauge


def make_app(collectors=()) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    install_metrics(app, "orchestrator", TOKEN, collectors)

    @app.get("/clusters/{cluster_id}")
    def cluster(cluster_id: str) -> dict:
        if cluster_id == "missing":
            raise ApiError(404, "CLUSTER_NOT_FOUND", "no such cluster")
        return {"id": cluster_id}

    @app.get("/stream")
    def stream() -> StreamingResponse:
        return StreamingResponse(iter([b"a", b"b"]), media_type="text/plain")

    return app


def scrape(client: TestClient) -> dict[tuple, float]:
    answer = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(answer.text) for sample in family.samples}


def requests(samples: dict, route: str, status: str, method: str = "GET") -> float:
    labels = (("method", method), ("route", route), ("service", "orchestrator"), ("status", status))
    return samples.get(("spindle_http_requests_total", labels), 0)


def test_requests_are_counted_by_route_template_and_status():
    client = TestClient(make_app(), raise_server_exceptions=False)
    for cluster_id in ("c1", "c2", "c3", "missing"):
        client.get(f"/clusters/{cluster_id}")
    client.get("/nowhere/at/all")
    client.post("/clusters/c1")  # a method the route does not serve
    samples = scrape(client)
    assert requests(samples, "/clusters/{cluster_id}", "200") == 3
    assert requests(samples, "/clusters/{cluster_id}", "404") == 1
    assert requests(samples, "unmatched", "404") == 1
    assert requests(samples, "/clusters/{cluster_id}", "405", method="POST") == 1
    assert not any("c1" in str(labels) or "/nowhere" in str(labels) for _, labels in samples)
    latency = ("spindle_http_request_duration_seconds_count",
               (("method", "GET"), ("route", "/clusters/{cluster_id}"), ("service", "orchestrator")))
    assert samples[latency] == 4


def test_a_stream_is_counted_once_it_has_ended():
    client = TestClient(make_app())
    assert client.get("/stream").text == "ab"
    assert requests(scrape(client), "/stream", "200") == 1


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                                     {"Authorization": TOKEN}])
def test_metrics_need_the_token(headers):
    answer = TestClient(make_app()).get("/metrics", headers=headers)
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "UNAUTHENTICATED"


def test_collectors_are_read_at_scrape_time_and_apps_do_not_share_a_registry():
    disks = Disks()
    first, second = TestClient(make_app([disks])), TestClient(make_app())
    first.get("/clusters/c1")
    assert scrape(first)[("spindle_disks", (("state", "free"),))] == 3
    disks.free = 1
    assert scrape(first)[("spindle_disks", (("state", "free"),))] == 1
    assert requests(scrape(second), "/clusters/{cluster_id}", "200") == 0
    assert ("spindle_disks", (("state", "free"),)) not in scrape(second)
