"""Clusters: create (async, idempotent), read, list, delete, and their event timeline."""
from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from spindle_common.contracts import NAME_PATTERN, ClusterPage, ClusterState, ClusterView, EventView
from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator import bindings, clusters, quotas
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.api.routes.quotas import QuotasDep
from spindle_orchestrator.schemas import ClusterCreate, cluster_view, event_view

router = APIRouter(prefix="/clusters", tags=["clusters"])


@router.post("", status_code=202, responses=error_responses(403, 404, 409, 422, descriptions={
    403: "the launch would pass a limit of the owner's quota (QUOTA_EXCEEDED)",
    404: "no such product or version (PRODUCT_NOT_FOUND, VERSION_NOT_FOUND), or a cluster named in `bind` "
         "is not the owner's (BOUND_CLUSTER_NOT_FOUND)",
    409: "the idempotency key was used for another launch (IDEMPOTENCY_KEY_REUSED), or a cluster named in "
         "`bind` is not running (BOUND_CLUSTER_NOT_RUNNING)",
    422: "a cluster named in `bind` is not of the product the binding takes (INVALID_OPTIONS)"}))
def create_cluster(body: ClusterCreate, session: SessionDep, _: ServiceCaller, response: Response,
                   q: QuotasDep) -> ClusterView:
    """Accept a launch; the worker takes it from PENDING. A repeated idempotency key returns 200.
    The clusters it binds are checked (``bindings.check``), the owner's quota is checked and the
    cluster recorded in one transaction (quotas.admit)."""
    manifest = q.manifest_of(body.product, body.version)
    bindings.check(session, manifest, body.options, body.owner_id)
    demand = quotas.cluster_demand(manifest, body.options, q.floating_ips)
    quotas.admit(session, body.owner_id, demand, q.defaults, q.manifest_of, q.floating_ips,
                 repeat_key=body.idempotency_key)
    cluster, created = clusters.create(session, body.owner, body.owner_id, body.product, body.version,
                                       body.options, body.idempotency_key, demand.as_json())
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


@router.delete("/{cluster_id}", status_code=202)
def delete_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller) -> ClusterView:
    """Ask for the cluster's end; the worker moves it through DESTROYING to DESTROYED."""
    cluster = clusters.get_or_404(session, cluster_id)
    if cluster.state != ClusterState.DESTROYED and not cluster.delete_requested:
        cluster.delete_requested = True
        clusters.record_event(session, cluster.id, "cluster", "DELETE_REQUESTED", "deletion requested")
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
