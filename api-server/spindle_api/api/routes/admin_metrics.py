"""Admin: the platform's capacity over time, per node and per disk class (the time-series database)."""
import time
from datetime import UTC, datetime

from fastapi import APIRouter

from spindle_api.api.deps import AdminUser, TimeSeriesDep
from spindle_api.api.routes.cluster_metrics import Minutes, Step, check_points
from spindle_api.schemas import NodeMetrics, NodeSeries
from spindle_common.errors import error_responses

router = APIRouter(prefix="/admin", tags=["admin: metrics"])


@router.get("/metrics", summary="capacity, allocation and use over time", responses=error_responses(
    401, 403, 422, 502, 503, descriptions={502: "the time-series database answered with an error (METRICS_ERROR)",
                                           503: "the time-series database cannot be reached (METRICS_UNAVAILABLE)"}))
def node_metrics(admin: AdminUser, timeseries: TimeSeriesDep, minutes: Minutes = 60, step: Step = 30) -> NodeMetrics:
    """Per node: ``cpus`` and ``memory`` (what it has), ``cpus_allocated`` and ``memory_allocated``
    (what placed members and job drivers hold), ``cpus_used`` and ``memory_used`` (what they use);
    ``disks`` by node, class and state (``wiping`` is the wipe queue)."""
    check_points(minutes, step)
    end = time.time()
    series = timeseries.node_series(minutes, step, end)
    return NodeMetrics(start=datetime.fromtimestamp(end - minutes * 60, UTC), end=datetime.fromtimestamp(end, UTC),
                       step_seconds=step,
                       series=[NodeSeries.model_validate({"figure": s.figure, "unit": s.unit, **s.labels,
                                                          "points": s.points}) for s in series])
