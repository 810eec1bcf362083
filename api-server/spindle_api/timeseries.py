"""The api-server's reads of the time-series database (VictoriaMetrics, ``deploy/lib/metrics.sh``).

Callers never send a query: each figure is a fixed PromQL template, filled with a cluster id the
caller was allowed to see (already checked against its pattern), so one user can read only their own
members' series. Rates are per second over ``RATE_WINDOW``.
"""
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import httpx

from spindle_common.errors import ApiError
from spindle_common.tls import default_tls

RATE_WINDOW = "1m"
METRICS_USER = "spindle"
FigureName = Literal["cpu", "memory", "memory_limit", "disk_read", "disk_write", "network_receive",
                     "network_transmit", "disk_used", "disk_size"]
NodeFigureName = Literal["disks", "cpus", "cpus_allocated", "cpus_used", "memory", "memory_allocated", "memory_used"]
Unit = Literal["cores", "bytes", "bytes/s", "disks"]


@dataclass(frozen=True)
class Figure:
    query: str  # PromQL with {sel}: the cluster's label selector
    unit: Unit
    by: tuple[str, ...] = ("member",)


# figure -> how it is read; per member (and per dedicated disk for the disk's bytes used)
MEMBER_FIGURES: dict[FigureName, Figure] = {
    "cpu": Figure(f"sum by (member) (rate(spindle_member_cpu_seconds_total{{sel}}[{RATE_WINDOW}]))", "cores"),
    "memory": Figure("sum by (member) (spindle_member_memory_bytes{sel})", "bytes"),
    "memory_limit": Figure("sum by (member) (spindle_member_memory_limit_bytes{sel})", "bytes"),
    "disk_read": Figure(f"sum by (member) (rate(spindle_member_disk_read_bytes_total{{sel}}[{RATE_WINDOW}]))",
                        "bytes/s"),
    "disk_write": Figure(f"sum by (member) (rate(spindle_member_disk_written_bytes_total{{sel}}[{RATE_WINDOW}]))",
                         "bytes/s"),
    "network_receive": Figure(
        f"sum by (member) (rate(spindle_member_network_receive_bytes_total{{sel}}[{RATE_WINDOW}]))", "bytes/s"),
    "network_transmit": Figure(
        f"sum by (member) (rate(spindle_member_network_transmit_bytes_total{{sel}}[{RATE_WINDOW}]))", "bytes/s"),
    "disk_used": Figure("sum by (member, disk) (spindle_member_disk_used_bytes{sel})", "bytes", ("member", "disk")),
    "disk_size": Figure("sum by (member, disk) (spindle_member_disk_size_bytes{sel})", "bytes", ("member", "disk")),
}


def per_node(query: str) -> str:
    """``query`` by node, 0 for a node it has no series for (nothing placed or running there): a
    chart's line goes back to 0 instead of keeping the last value it saw."""
    return f"(sum by (node) ({query}) or sum by (node) (spindle_node_cpus) * 0)"


# The admin page's figures over time: per node (and disk class and state for disks): capacity,
# what placed tasks hold, what members use; disks by state (the wipe queue is state "wiping").
NODE_FIGURES: dict[NodeFigureName, Figure] = {
    "disks": Figure("sum by (node, disk_class, state) (spindle_disks)", "disks", ("node", "disk_class", "state")),
    "cpus": Figure("sum by (node) (spindle_node_cpus)", "cores", ("node",)),
    "cpus_allocated": Figure(per_node("spindle_node_allocated_cpus"), "cores", ("node",)),
    "cpus_used": Figure(per_node(f"rate(spindle_member_cpu_seconds_total[{RATE_WINDOW}])"), "cores", ("node",)),
    "memory": Figure("sum by (node) (spindle_node_mem_mb) * 1048576", "bytes", ("node",)),
    "memory_allocated": Figure(per_node("spindle_node_allocated_mem_mb") + " * 1048576", "bytes", ("node",)),
    "memory_used": Figure(per_node("spindle_member_memory_bytes"), "bytes", ("node",)),
}


def cluster_selector(cluster_id: str) -> str:
    """The label selector of one cluster's members (not its jobs' drivers). The id is a checked
    cluster id (``c`` + hex), so it needs no escaping; anything else is refused here too."""
    if not (cluster_id.startswith("c") and cluster_id[1:].isalnum() and cluster_id.isascii()):
        raise ValueError(f"not a cluster id: {cluster_id!r}")
    return f'{{cluster="{cluster_id}",job=""}}'


@dataclass(frozen=True)
class Series:
    figure: str
    unit: Unit
    labels: dict[str, str]
    points: list[tuple[float, float]]


def parse_matrix(figure: str, spec: Figure, answer: dict) -> list[Series]:
    """VictoriaMetrics' /api/v1/query_range answer (a matrix) as series of (unix seconds, value)."""
    if answer.get("status") != "success" or answer.get("data", {}).get("resultType") != "matrix":
        raise ApiError(502, "METRICS_ERROR", f"the time-series database answered {figure} with an error",
                       {"error": str(answer.get("error", ""))[:200]})
    series = []
    for result in answer["data"]["result"]:
        labels = {key: result["metric"].get(key, "") for key in spec.by}
        points = [(float(t), float(v)) for t, v in result.get("values", [])]
        series.append(Series(figure, spec.unit, labels, points))
    return sorted(series, key=lambda s: tuple(s.labels.values()))


class TimeSeriesClient:
    def __init__(self, url: str, token: str, timeout: float = 10.0, transport: httpx.BaseTransport | None = None):
        self._http = httpx.Client(base_url=url, auth=(METRICS_USER, token), timeout=timeout, transport=transport,
                                  verify=default_tls())

    def close(self) -> None:
        self._http.close()

    def query_range(self, query: str, start: float, end: float, step: float) -> dict:
        try:
            answer = self._http.get("/api/v1/query_range", params={"query": query, "start": f"{start:.3f}",
                                                                    "end": f"{end:.3f}", "step": f"{step:g}s"})
        except httpx.HTTPError as exc:
            raise ApiError(503, "METRICS_UNAVAILABLE", f"cannot reach the time-series database: {type(exc).__name__}",
                           {}) from exc
        if answer.status_code != 200:
            raise ApiError(502, "METRICS_ERROR", f"the time-series database answered {answer.status_code}", {})
        return answer.json()

    def read(self, figures: Iterable[tuple[str, Figure]], minutes: int, step: int, now: float, selector: str = "",
             ) -> list[Series]:
        """Every figure over the last ``minutes`` before ``now``, a point every ``step`` seconds."""
        series: list[Series] = []
        for figure, spec in figures:
            query = spec.query.replace("{sel}", selector)
            series += parse_matrix(figure, spec, self.query_range(query, now - minutes * 60, now, step))
        return series

    def member_series(self, cluster_id: str, minutes: int, step: int, now: float) -> list[Series]:
        """One cluster's member figures (and no one else's)."""
        return self.read(MEMBER_FIGURES.items(), minutes, step, now, cluster_selector(cluster_id))

    def node_series(self, minutes: int, step: int, now: float) -> list[Series]:
        return self.read(NODE_FIGURES.items(), minutes, step, now)
