"""A user's clusters: list, show, delete, and the event timeline (JSON or a live SSE stream).

Users see only their own clusters; anything else is a 404, so others' clusters cannot be probed.
Administrators see everyone's."""
import json
import time
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from spindle_api.api.deps import CurrentUser, OrchestratorDep, SettingsDep
from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.schemas import Cluster, ClusterEvent, ClusterPage
from spindle_api.upstream import service_client
from spindle_common.clients import ServiceClient
from spindle_common.errors import ApiError

router = APIRouter(prefix="/clusters", tags=["clusters"])

STATES = "PENDING|QUEUED|SCHEDULING|DEPLOYING|CONFIGURING|RUNNING|FAILED|DESTROYING|DESTROYED"
# An event stream ends once the cluster reaches one of these.
SETTLED = ("RUNNING", "FAILED", "DESTROYED")
# Seconds between SSE comments that keep idle proxies from closing the stream.
KEEPALIVE_S = 15.0
StateFilter = Annotated[str | None, Query(pattern=f"^({STATES})$")]
PageSize = Annotated[int, Query(ge=1, le=500)]


def _not_found(username: str, cluster_id: str) -> ApiError:
    return ApiError(404, "CLUSTER_NOT_FOUND", f"{username} has no cluster {cluster_id}",
                    {"username": username, "cluster_id": cluster_id})


def _check_username(user: User, username: str) -> None:
    if username != user.username and not user.is_admin:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r} you may see", {"username": username})


def visible_cluster(orchestrator: ServiceClient, user: User, username: str, product: str, version: str,
                    cluster_id: str) -> dict[str, Any]:
    """The cluster at this address if ``user`` may see it; a 404 in every other case."""
    if username != user.username and not user.is_admin:
        raise _not_found(username, cluster_id)
    try:
        cluster = orchestrator.request("GET", f"/clusters/{cluster_id}")
    except ApiError as exc:
        if exc.status == 404:
            raise _not_found(username, cluster_id) from None
        raise
    if (cluster["owner"], cluster["product"], cluster["version"]) != (username, product, version):
        raise _not_found(username, cluster_id)
    return cluster


@router.get("/{username}")
def list_clusters(username: str, user: CurrentUser, orchestrator: OrchestratorDep,
                  state: StateFilter = None, product: str | None = None, page_size: PageSize = 50,
                  page_token: str | None = None) -> ClusterPage:
    """The user's clusters (filtered by state and product); pass ``next_page_token`` back as ``page_token`` for more."""
    _check_username(user, username)
    return cluster_page(orchestrator, username, state, product, page_size, page_token)


def cluster_page(orchestrator: ServiceClient, owner: str | None, state: str | None, product: str | None,
                 page_size: int, page_token: str | None) -> dict[str, Any]:
    """One page of clusters (of ``owner``, or everyone's), as the orchestrator lists them."""
    params = {"owner": owner, "state": state, "product": product, "page_size": page_size, "page_token": page_token}
    return orchestrator.request("GET", "/clusters", params={k: v for k, v in params.items() if v is not None})


@router.get("/{username}/{product}/{version}/{cluster_id}", response_model=Cluster)
def get_cluster(username: str, product: str, version: str, cluster_id: str, user: CurrentUser,
                orchestrator: OrchestratorDep) -> dict[str, Any]:
    """The cluster: state (with a machine-readable reason when it failed), members, IPs, disks, ports."""
    return visible_cluster(orchestrator, user, username, product, version, cluster_id)


@router.delete("/{username}/{product}/{version}/{cluster_id}", status_code=202, response_model=Cluster)
def delete_cluster(username: str, product: str, version: str, cluster_id: str, user: CurrentUser,
                   orchestrator: OrchestratorDep) -> dict[str, Any]:
    """Stop and destroy the cluster: containers, IPs and disks (wiped) are released asynchronously."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return orchestrator.request("DELETE", f"/clusters/{cluster_id}")


@router.get("/{username}/{product}/{version}/{cluster_id}/events", response_model=list[ClusterEvent],
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "the timeline; with Accept: text/event-stream or ?stream=true, "
                                            "a live SSE stream that ends when the cluster settles"}})
def cluster_events(username: str, product: str, version: str, cluster_id: str, request: Request, user: CurrentUser,
                   orchestrator: OrchestratorDep, settings: SettingsDep,
                   after_seq: Annotated[int, Query(ge=0)] = 0, stream: bool = False,
                   last_event_id: Annotated[int | None, Header(ge=0)] = None) -> Any:
    """The per-member, per-step event timeline after ``after_seq``."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    if stream or "text/event-stream" in request.headers.get("accept", ""):
        start = last_event_id if last_event_id is not None else after_seq
        return StreamingResponse(_event_stream(settings, user, cluster_id, start), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return orchestrator.request("GET", f"/clusters/{cluster_id}/events", params={"after_seq": after_seq})


def _sse(event: str, data: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"


def _event_stream(settings: Settings, user: User, cluster_id: str, after_seq: int) -> Iterator[str]:
    """SSE: each new event as ``event: event``; a final ``event: end`` carries the settled cluster.
    (A generator of its own client: the request's dependencies are gone while it streams.)"""
    with service_client(settings, "orchestrator", user) as orchestrator:
        last_sent = time.monotonic()
        while True:
            # Read the state first: events recorded up to a settled state are then all in the next read.
            cluster = orchestrator.request("GET", f"/clusters/{cluster_id}")
            for event in orchestrator.request("GET", f"/clusters/{cluster_id}/events", params={"after_seq": after_seq}):
                after_seq = event["seq"]
                last_sent = time.monotonic()
                yield _sse("event", event, event["seq"])
            if cluster["state"] in SETTLED:
                yield _sse("end", cluster)
                return
            if time.monotonic() - last_sent > KEEPALIVE_S:
                last_sent = time.monotonic()
                yield ": keep-alive\n\n"
            time.sleep(settings.event_poll_interval_s)
