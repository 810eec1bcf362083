"""Clusters: create (async, idempotent), read, list, delete, and their event timeline."""
from typing import Annotated

from fastapi import APIRouter, Query, Response

from spindle_orchestrator import clusters
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.schemas import ClusterCreate, ClusterOut, ClusterPage, EventOut
from spindle_orchestrator.states import CLUSTER_STATES, DESTROYED

router = APIRouter(prefix="/clusters", tags=["clusters"])


@router.post("", status_code=202)
def create_cluster(body: ClusterCreate, session: SessionDep, _: ServiceCaller, response: Response) -> ClusterOut:
    """Accept a launch; the worker takes it from PENDING. A repeated idempotency key returns 200."""
    cluster, created = clusters.create(session, body.owner, body.product, body.version, body.options,
                                       body.idempotency_key)
    if not created:
        response.status_code = 200
    return ClusterOut.of(cluster)


@router.get("")
def list_clusters(session: SessionDep, _: ServiceCaller, owner: str | None = None,
                  state: Annotated[str | None, Query(pattern="^(" + "|".join(CLUSTER_STATES) + ")$")] = None,
                  product: str | None = None, page_size: Annotated[int, Query(ge=1, le=500)] = 50,
                  page_token: str | None = None) -> ClusterPage:
    rows, token = clusters.list_page(session, owner, state, product, page_size, page_token)
    return ClusterPage(items=[ClusterOut.of(c) for c in rows], next_page_token=token)


@router.get("/{cluster_id}")
def get_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller) -> ClusterOut:
    return ClusterOut.of(clusters.get_or_404(session, cluster_id))


@router.delete("/{cluster_id}", status_code=202)
def delete_cluster(cluster_id: str, session: SessionDep, _: ServiceCaller) -> ClusterOut:
    """Ask for the cluster's end; the worker moves it through DESTROYING to DESTROYED."""
    cluster = clusters.get_or_404(session, cluster_id)
    if cluster.state != DESTROYED and not cluster.delete_requested:
        cluster.delete_requested = True
        clusters.record_event(session, cluster.id, "cluster", "DELETE_REQUESTED", "deletion requested")
        session.commit()
    return ClusterOut.of(cluster)


@router.get("/{cluster_id}/events")
def cluster_events(cluster_id: str, session: SessionDep, _: ServiceCaller,
                   after_seq: Annotated[int, Query(ge=0)] = 0) -> list[EventOut]:
    clusters.get_or_404(session, cluster_id)
    return [EventOut.of(e) for e in clusters.events_after(session, cluster_id, after_seq)]
