"""Clusters: create (async, idempotent), read, list, delete, and their event timeline."""
from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from spindle_common.catalog import (
    member_requests,
    platform_defaults,
    replicas_sharing,
    role_counts,
    setting_notices,
    validate_options,
    with_counts,
)
from spindle_common.contracts import (
    DATASET_NAME_PATTERN,
    NAME_PATTERN,
    ClusterPage,
    ClusterState,
    ClusterView,
    EventView,
)
from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator import bindings, clusters, datasets, quotas
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.api.routes.quotas import QuotasDep
from spindle_orchestrator.clusters import REPLICAS_SHARE, platform_nodes, sharing_message
from spindle_orchestrator.schemas import ClusterCreate, cluster_view, event_view

router = APIRouter(prefix="/clusters", tags=["clusters"])


@router.post("", status_code=202, responses=error_responses(403, 404, 409, 422, descriptions={
    403: "the launch would pass a limit of the owner's quota (QUOTA_EXCEEDED)",
    404: "no such product or version (PRODUCT_NOT_FOUND, VERSION_NOT_FOUND), or a cluster named in `bind` "
         "is not the owner's (BOUND_CLUSTER_NOT_FOUND)",
    409: "the idempotency key was used for another launch (IDEMPOTENCY_KEY_REUSED), or a cluster named in "
         "`bind` is not running (BOUND_CLUSTER_NOT_RUNNING)",
    422: "a cluster named in `bind` is not of the product the binding takes (INVALID_OPTIONS); more members of "
         "a role kept apart (placement.replicas_apart) than nodes to take them (REPLICAS_CANNOT_BE_APART)"}))
def create_cluster(body: ClusterCreate, session: SessionDep, _: ServiceCaller, response: Response,
                   q: QuotasDep, request: Request) -> ClusterView:
    """Accept a launch; the worker takes it from PENDING. A repeated idempotency key returns 200.
    Settings whose default depends on the platform are decided for its nodes now (``platform_defaults``:
    HDFS's ``ha``) and recorded in the options. Its replicas must fit apart on the platform's nodes
    (``replicas_sharing``: 422; on a one-node platform they share it, and the cluster says so). The
    clusters it binds are checked (``bindings.check``), the dataset it attaches too
    (``datasets.check_attachable``, the dataset locked), then the owner's quota is checked and the
    cluster recorded in one transaction (quotas.admit; the dataset's kept disks already count, so
    they are not asked for twice)."""
    manifest = q.manifest_of(body.product, body.version)
    nodes = platform_nodes(request.app.state.scheduler)
    body.options = platform_defaults(manifest, body.options, nodes)
    sharing = replicas_sharing(manifest, body.options, nodes)
    bindings.check(session, manifest, body.options, body.owner_id)
    demand = quotas.cluster_demand(manifest, body.options, q.floating_ips)
    dataset, asked = None, demand
    name = body.options.get("dataset")
    if name and clusters.repeated(session, body.owner_id, body.idempotency_key) is None:
        dataset = datasets.check_attachable(session, body.owner_id, name, body.product,
                                            member_requests(manifest, body.options))
        held = datasets.kept_disks_of(dataset)
        asked = replace(demand, disks={c: n - held.get(c, 0) for c, n in demand.disks.items()})
    quotas.admit(session, body.owner_id, asked, q.defaults, q.manifest_of, q.floating_ips,
                 repeat_key=body.idempotency_key)
    notices = setting_notices(manifest, body.options)
    if sharing:
        notices[REPLICAS_SHARE] = sharing_message(manifest, body.options, sharing)
    cluster, created = clusters.create(session, body.owner, body.owner_id, body.product, body.version,
                                       body.options, body.idempotency_key, demand.as_json(), dataset, notices)
    if not created:
        response.status_code = 200
    return cluster_view(cluster)


@router.get("")
def list_clusters(session: SessionDep, _: ServiceCaller, owner: str | None = None,
                  state: ClusterState | None = None,
                  product: str | None = None, page_size: Annotated[int, Query(ge=1, le=500)] = 50,
                  page_token: str | None = None, owner_id: str | None = None) -> ClusterPage:
    """``owner``: by the owner's name; ``owner_id``: by who owns them (the user's stable id)."""
    rows, token = clusters.list_page(session, owner, state, product, page_size, page_token, owner_id)
    return ClusterPage(items=[cluster_view(c) for c in rows], next_page_token=token)


@router.get("/{cluster_id}")
def get_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller) -> ClusterView:
    return cluster_view(clusters.get_or_404(session, cluster_id))


@router.delete("/{cluster_id}", status_code=202, responses=error_responses(404, 409, 422, descriptions={
    409: "``dataset`` names a dataset you have already (DATASET_EXISTS); live clusters bind this one and "
         "``force`` was not given (CLUSTER_IN_USE, naming them in ``details.bound_by``)",
    422: "``dataset`` given without ``keep_disks``, or not the name of the dataset the cluster attached"}))
def delete_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller, keep_disks: bool = False,
                   dataset: Annotated[str | None, Query(pattern=DATASET_NAME_PATTERN)] = None,
                   force: bool = False) -> ClusterView:
    """Ask for the cluster's end; the worker moves it through DESTROYING to DESTROYED. With
    ``keep_disks`` its members' disks are kept with their data as the owner's dataset ``dataset``
    (default: the cluster's id; the dataset it attached, if any) instead of being wiped. Refused while
    live clusters bind it, unless ``force``: they then run on without it, told so. A repeat changes
    nothing."""
    cluster = clusters.get_or_404(session, cluster_id, lock=True)
    if dataset is not None and not keep_disks:
        raise ApiError(422, "INVALID_OPTIONS", "dataset names what keep_disks keeps: give keep_disks=true too")
    if cluster.state == ClusterState.DESTROYED or cluster.delete_requested:
        return cluster_view(cluster)
    bindings.refuse_or_tell_bound(session, cluster, force)
    if keep_disks:
        datasets.reserve(session, cluster, dataset)
        cluster.keep_disks = True
    cluster.delete_requested = True
    clusters.record_event(session, cluster.id, "cluster", "DELETE_REQUESTED", "deletion requested"
                          + (", keeping the members' disks as a dataset" if keep_disks else ""))
    clusters.wake(session, cluster.id)
    session.commit()
    return cluster_view(cluster)


# The states a cluster can be stopped in (a stop asked again while it stops or is stopped changes nothing).
STOPPABLE = (ClusterState.RUNNING, ClusterState.DEGRADED, ClusterState.RESIZING, ClusterState.STOPPING,
             ClusterState.STOPPED)


@router.post("/{cluster_id}/stop", status_code=202, responses=error_responses(404, 409, descriptions={
    409: "the cluster is not running (CLUSTER_NOT_RUNNING)"}))
def stop_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller) -> ClusterView:
    """Stop a running cluster: its jobs and containers are stopped, its members keep their disks (data
    and all) and floating IPs; it counts against the owner's quota without its cpus and memory."""
    cluster = clusters.get_or_404(session, cluster_id, lock=True)
    if cluster.delete_requested or cluster.state not in STOPPABLE:
        raise ApiError(409, "CLUSTER_NOT_RUNNING", f"cluster {cluster.id} is {cluster.state}: only a running "
                       "cluster can be stopped", {"state": cluster.state})
    if not cluster.stop_requested:
        cluster.stop_requested = True
        clusters.record_event(session, cluster.id, "cluster", "STOP_REQUESTED", "stop requested")
        clusters.wake(session, cluster.id)
        session.commit()
    return cluster_view(cluster)


@router.post("/{cluster_id}/start", status_code=202, responses=error_responses(403, 404, 409, descriptions={
    403: "its cpus and memory would pass the owner's quota (QUOTA_EXCEEDED)",
    409: "the cluster is not stopped (CLUSTER_NOT_STOPPED)"}))
def start_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller, q: QuotasDep) -> ClusterView:
    """Start a stopped (or stopping) cluster again: its members are launched on their kept disks, on
    their nodes, with the same floating IPs; its cpus and memory are checked against the owner's
    quota first."""
    cluster = clusters.get_or_404(session, cluster_id, lock=True)
    if cluster.delete_requested or not cluster.stop_requested or \
            cluster.state not in (ClusterState.STOPPING, ClusterState.STOPPED):
        if cluster.state in (ClusterState.QUEUED, ClusterState.DEPLOYING, ClusterState.CONFIGURING,
                             ClusterState.RUNNING) and not cluster.stop_requested and not cluster.delete_requested:
            return cluster_view(cluster)  # started already: a repeat
        raise ApiError(409, "CLUSTER_NOT_STOPPED", f"cluster {cluster.id} is {cluster.state}: only a stopped "
                       "cluster can be started", {"state": cluster.state})
    quotas.admit_start(session, cluster, q.defaults, q.manifest_of, q.floating_ips)
    cluster.stop_requested = False
    clusters.record_event(session, cluster.id, "cluster", "START_REQUESTED", "start requested")
    clusters.wake(session, cluster.id)
    session.commit()
    return cluster_view(cluster)


@router.get("/{cluster_id}/events")
def cluster_events(cluster_id: str, session: SessionDep, _: ServiceCaller,
                   after_seq: Annotated[int, Query(ge=0)] = 0) -> list[EventView]:
    clusters.get_or_404(session, cluster_id)
    return [event_view(e) for e in clusters.events_after(session, cluster_id, after_seq)]


@router.get("/{cluster_id}/events/stream", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "each event as it is committed; `end` with the settled cluster"},
                       **error_responses(401, 403, 404, 422)})
async def cluster_event_stream(request: Request, _: ServiceCaller, cluster_id: str = Path(pattern=NAME_PATTERN),
                               after_seq: Annotated[int, Query(ge=0)] = 0, follow: bool = False) -> StreamingResponse:
    """The timeline after ``after_seq`` as Server-Sent Events, live until the cluster settles (with
    ``follow``: until it is destroyed). Async and without a request session: an open stream holds
    neither a thread nor a database connection while it waits."""
    hub = request.app.state.event_hub
    if not await hub.exists(cluster_id):
        raise ApiError(404, "CLUSTER_NOT_FOUND", f"cluster {cluster_id} does not exist")
    return StreamingResponse(hub.stream(cluster_id, after_seq, follow), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})


class ResizeIn(BaseModel):
    roles: dict[Annotated[str, Field(min_length=1, max_length=64)], Annotated[int, Field(ge=0, le=10_000)]] = Field(
        min_length=1, max_length=64, description="role → how many members of it the cluster should have")


# The states a cluster can be resized in: served (a resize under way may be changed again).
RESIZABLE = (ClusterState.RUNNING, ClusterState.DEGRADED, ClusterState.RESIZING)


@router.post("/{cluster_id}/resize", status_code=202, responses=error_responses(403, 404, 409, 422, descriptions={
    403: "the members it adds would pass the owner's quota (QUOTA_EXCEEDED)",
    409: "the cluster is not running (CLUSTER_NOT_RUNNING)",
    422: "a role the product does not have, or a count outside the role's min and max (INVALID_OPTIONS); more "
         "members of a role kept apart than nodes to take them (REPLICAS_CANNOT_BE_APART)"}))
def resize_cluster(cluster_id: str, body: ResizeIn, session: SessionDep, _: ServiceCaller,
                   q: QuotasDep, request: Request) -> ClusterView:
    """Change how many members of each role a running cluster has: the counts go into its options
    (checked as a launch's: the role's min and max), what it adds is checked against the owner's
    quota, and the worker adds and removes members (``resize.py``, RESIZING → RUNNING)."""
    cluster = clusters.get_or_404(session, cluster_id, lock=True)
    if cluster.delete_requested or cluster.stop_requested or cluster.state not in RESIZABLE:
        raise ApiError(409, "CLUSTER_NOT_RUNNING", f"cluster {cluster.id} is {cluster.state}: only a running "
                       "cluster can be resized", {"state": cluster.state})
    manifest = q.manifest_of(cluster.product, cluster.version)
    unknown = sorted(set(body.roles) - set(manifest["roles"]))
    if unknown:
        raise ApiError(422, "INVALID_OPTIONS", f"{cluster.product} has no role {', '.join(unknown)}",
                       {"errors": [{"path": f"roles.{r}", "message": "no such role"} for r in unknown]})
    before = role_counts(manifest, cluster.options)
    options = validate_options(manifest, with_counts(cluster.options, body.roles))
    sharing = replicas_sharing(manifest, options, platform_nodes(request.app.state.scheduler))
    demand = quotas.cluster_demand(manifest, options, q.floating_ips)
    old = quotas.Amounts.of_json(cluster.demand) if cluster.demand else quotas.cluster_demand(
        manifest, cluster.options, q.floating_ips)
    quotas.admit(session, cluster.owner_id or "", quotas.growth(old, demand), q.defaults, q.manifest_of,
                 q.floating_ips)
    cluster.options, cluster.demand = options, demand.as_json()
    if sharing and not any(n["code"] == REPLICAS_SHARE for n in cluster.notices or ()):
        clusters.add_notice(session, cluster, REPLICAS_SHARE, sharing_message(manifest, options, sharing))
    changes = ", ".join(f"{role} {before.get(role, 0)} → {count}" for role, count in sorted(body.roles.items())
                        if before.get(role, 0) != count)
    clusters.record_event(session, cluster.id, "cluster", "RESIZE_REQUESTED",
                          f"resize requested: {changes or 'no change'}")
    clusters.wake(session, cluster.id)
    session.commit()
    return cluster_view(cluster)
