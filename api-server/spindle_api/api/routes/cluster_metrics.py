"""A cluster's figures over time: per member CPU, memory, disk I/O, network and the bytes used on each
dedicated disk, as its node collected them (``spindle-member-stats``) into the time-series database.

Only the cluster's owner (and administrators) may read them; others' clusters are 404 like every
other route of a cluster. The query is the server's own, never the caller's."""
import time
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from spindle_api.api.deps import CurrentUser, OrchestratorDep, TimeSeriesDep
from spindle_api.api.params import ClusterId, Product, Username, Version
from spindle_api.api.routes.clusters import CLUSTER_ERRORS, visible_cluster
from spindle_api.schemas import ClusterMetrics, MetricSeries
from spindle_common.errors import ApiError, error_responses

router = APIRouter(prefix="/clusters", tags=["clusters"])

# At most this many points per series (minutes × 60 ÷ step).
MAX_POINTS = 1440
Minutes = Annotated[int, Query(ge=1, le=10080, description="how far back")]
Step = Annotated[int, Query(ge=5, le=3600, description="seconds between two points")]


def check_points(minutes: int, step: int) -> None:
    if minutes * 60 // step > MAX_POINTS:
        raise ApiError(422, "TOO_MANY_POINTS", f"{minutes} minutes every {step} s is more than {MAX_POINTS} points "
                       "per series: ask for a larger step", {"max_points": MAX_POINTS})


@router.get("/{username}/{product}/{version}/{cluster_id}/metrics", responses={
    **CLUSTER_ERRORS,
    **error_responses(502, 503, descriptions={502: "the orchestrator or the time-series database answered with an "
                                                   "error (METRICS_ERROR from the latter)",
                                              503: "the orchestrator or the time-series database cannot be reached "
                                                   "(METRICS_UNAVAILABLE from the latter)"})})
def cluster_metrics(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                    orchestrator: OrchestratorDep, timeseries: TimeSeriesDep,
                    minutes: Minutes = 30, step: Step = 15) -> ClusterMetrics:
    """Per-member series of the last ``minutes``, a point every ``step`` seconds (at most 1440 points
    per series): ``cpu`` (cores in use), ``memory`` and ``memory_limit`` (bytes), ``disk_read`` and
    ``disk_write`` (bytes/s on its dedicated disks' devices), ``network_receive`` and ``network_transmit`` (bytes/s),
    and per dedicated disk ``disk_used`` and ``disk_size`` (bytes). Members that ran on a node that
    does not report (yet) have no series."""
    check_points(minutes, step)
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    end = time.time()
    series = timeseries.member_series(cluster_id, minutes, step, now=end)
    return ClusterMetrics(
        cluster_id=cluster_id, start=datetime.fromtimestamp(end - minutes * 60, UTC),
        end=datetime.fromtimestamp(end, UTC), step_seconds=step,
        series=[MetricSeries.model_validate({"figure": s.figure, "unit": s.unit, **s.labels, "points": s.points})
                for s in series])
