"""Prometheus metrics of a Spindle service: ``GET /metrics`` (text exposition format) with its HTTP
traffic and whatever the service adds.

- Every request is counted by method, **route template** (``/clusters/{cluster_id}``, never the
  path a caller typed: ids do not become label values) and status, and timed in a histogram. A
  request no route matched is counted under the route ``unmatched``.
- A service adds its own figures with ``Collector``s (read at scrape time, e.g. disks by state from
  its tables) or with counters and histograms made on its ``registry``.
- ``/metrics`` needs ``Authorization: Bearer <SPINDLE_METRICS_TOKEN>`` (written by ``deploy/up``,
  0600, and given to the time-series database's scraper); anything else is 401. The figures name
  routes, states and counts, not tenants' data, but they are the platform's, not the public's.

Each app has its own ``CollectorRegistry``, so several apps in one process (tests) never share one.
"""
import hmac
import logging
import time
from collections.abc import Iterable
from typing import Annotated

from fastapi import Depends, FastAPI, Response
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from spindle_common import db
from spindle_common.errors import envelope

log = logging.getLogger("spindle.metrics")

DEV_METRICS_TOKEN = "dev-insecure-metrics-token"
UNMATCHED = "unmatched"
METRICS_BEARER = HTTPBearer(auto_error=False, scheme_name="MetricsToken",
                            description="the platform's metrics token: Authorization: Bearer <token>")
# Request latencies from a millisecond to a minute (SSE streams are counted when they end).
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class HttpMetrics:
    """The request counter and latency histogram of one service, on its registry."""

    def __init__(self, registry: CollectorRegistry, service: str):
        self.requests = Counter("spindle_http_requests", "HTTP requests answered, by route template and status",
                                ["service", "method", "route", "status"], registry=registry)
        self.latency = Histogram("spindle_http_request_duration_seconds",
                                 "Seconds from a request's arrival to the end of its answer",
                                 ["service", "method", "route"], buckets=LATENCY_BUCKETS, registry=registry)
        self.service = service

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(self.service, method, route, str(status)).inc()
        self.latency.labels(self.service, method, route).observe(seconds)


def route_template(scope: Scope) -> str:
    """The path template of the route that answered (Starlette puts it in the scope), else UNMATCHED."""
    route = scope.get("route")
    return getattr(route, "path", None) or UNMATCHED


class MetricsMiddleware:
    """Pure ASGI (a streaming answer is timed to its last byte, and nothing is buffered)."""

    def __init__(self, app: ASGIApp, metrics: HttpMetrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status = time.perf_counter(), [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.metrics.observe(scope["method"], route_template(scope), status[0], time.perf_counter() - start)


def install_metrics(app: FastAPI, service: str, token: str, collectors: Iterable[Collector] = ()) -> CollectorRegistry:
    """Count ``app``'s requests and serve ``GET /metrics`` (bearer ``token``); the app's registry,
    for the service's own counters."""
    registry = CollectorRegistry()
    for collector in collectors:
        registry.register(collector)
    app.add_middleware(MetricsMiddleware, metrics=HttpMetrics(registry, service))

    @app.get("/metrics", tags=["metrics"], response_class=Response, responses={
        200: {"description": "Prometheus text exposition format",
              "content": {"text/plain": {"schema": {"type": "string"}}}},
        401: {"description": "No or a wrong metrics token (UNAUTHENTICATED)",
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}})
    def metrics(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(METRICS_BEARER)]) -> Response:
        """The service's metrics, for the time-series database's scraper."""
        if credentials is None or not hmac.compare_digest(credentials.credentials.encode(), token.encode()):
            # (answered here, not raised: an app without Spindle's error handlers, like the Mesos master's, too)
            return JSONResponse(envelope("UNAUTHENTICATED", "metrics need the platform's metrics token"), 401)
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return registry


class QueryMetrics:
    """Figures read from the service's own tables at each scrape: per family, one SQL query whose rows
    are the label values, then the value (a family with no rows has no samples). ``kind`` "gauge" or
    "counter" (then ``name`` has no ``_total``; a total the tables keep, like wipes done). With the
    database down, the scrape still answers (without these) and the failure is logged."""

    def __init__(self, database_url: str, families: Iterable[tuple[str, str, str, list[str], str]]):
        self.database_url = database_url
        self.families = list(families)  # (kind, name, help, labels, sql)

    def collect(self) -> Iterable[Metric]:
        try:
            with db.get_engine(self.database_url).connect() as conn:
                results = [(family, conn.execute(text(family[4])).all()) for family in self.families]
        except SQLAlchemyError as exc:
            log.warning("metrics from the database are missing from this scrape: %s", type(exc).__name__)
            return
        for (kind, name, documentation, labels, _), rows in results:
            metric_family = GaugeMetricFamily if kind == "gauge" else CounterMetricFamily
            family = metric_family(name, documentation, labels=labels)
            for *values, number in rows:
                family.add_metric([str(value) for value in values], float(number))
            yield family
