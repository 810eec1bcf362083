"""A user's clusters: list, show, delete, and the event timeline (JSON or a live SSE stream).

Users see only their own clusters; anything else is a 404, so others' clusters cannot be probed.
Administrators see everyone's."""
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import httpx
from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import Field

from spindle_api.api.deps import CatalogDep, CurrentUser, OrchestratorDep, SessionDep, SettingsDep
from spindle_api.api.links import cluster_links
from spindle_api.api.params import (
    ClusterId,
    ClusterPageToken,
    DatasetName,
    PageSize,
    Product,
    ProductFilter,
    StateFilter,
    Username,
    Version,
    segment,
)
from spindle_api.api.routes.products import resolved_options
from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.replicas import for_the_platform
from spindle_api.schemas import ClusterEvent, ClusterPage, ClusterView, Plan, upstream_model
from spindle_api.upstream import actor_of, service_client
from spindle_common.auth import internal_headers
from spindle_common.catalog import ROLE_PATTERN, member_requests, with_counts
from spindle_common.clients import ServiceClient
from spindle_common.contracts import ClusterSpec, Model
from spindle_common.errors import ApiError, error_responses
from spindle_common.tls import default_tls

router = APIRouter(prefix="/clusters", tags=["clusters"])

NOT_VISIBLE = ("no such cluster at this address, or not one the caller may see: others' clusters are 404, "
               "never 403 (CLUSTER_NOT_FOUND)")
# What every route of one cluster can answer besides its success.
CLUSTER_ERRORS = error_responses(401, 404, 422, 502, 503, descriptions={404: NOT_VISIBLE})


def _not_found(username: str, cluster_id: str) -> ApiError:
    return ApiError(404, "CLUSTER_NOT_FOUND", f"{username} has no cluster {cluster_id}",
                    {"username": username, "cluster_id": cluster_id})


def _check_username(user: User, username: str) -> None:
    if username != user.username and not user.is_admin:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r} you may see", {"username": username})


def visible_cluster(orchestrator: ServiceClient, user: User, username: str, product: str, version: str,
                    cluster_id: str) -> ClusterView:
    """The cluster at this address if ``user`` may see it; a 404 in every other case."""
    if username != user.username and not user.is_admin:
        raise _not_found(username, cluster_id)
    try:
        cluster = upstream_model(ClusterView, orchestrator.request("GET", f"/clusters/{segment(cluster_id)}"))
    except ApiError as exc:
        if exc.status == 404:
            raise _not_found(username, cluster_id) from None
        raise
    if (cluster.owner, cluster.product, cluster.version) != (username, product, version):
        raise _not_found(username, cluster_id)
    # The name matching is not enough: a user deleted and re-created under it owned nothing of this.
    if username == user.username and cluster.owner_id != actor_of(user):
        raise _not_found(username, cluster_id)
    return cluster


@router.get("/{username}", responses={
    200: {"description": "a page of clusters, newest first", "links": cluster_links("/items/0")},
    **error_responses(401, 404, 422, 502, 503, descriptions={
        404: "not the caller's own username (USER_NOT_FOUND; admins may list anyone's)",
        422: "a parameter is not valid, e.g. a page_token this API did not return (VALIDATION_FAILED)"})})
def list_clusters(username: Username, user: CurrentUser, orchestrator: OrchestratorDep,
                  state: StateFilter = None, product: ProductFilter = None, page_size: PageSize = 50,
                  page_token: ClusterPageToken = None) -> ClusterPage:
    """The user's clusters (filtered by state and product); pass ``next_page_token`` back as ``page_token`` for more."""
    _check_username(user, username)
    if username == user.username:  # the caller's own: by id, nothing of an earlier user of the name
        return cluster_page(orchestrator, None, state, product, page_size, page_token, owner_id=actor_of(user))
    return cluster_page(orchestrator, username, state, product, page_size, page_token)


def cluster_page(orchestrator: ServiceClient, owner: str | None, state: str | None, product: str | None,
                 page_size: int, page_token: str | None, owner_id: str | None = None) -> ClusterPage:
    """One page of clusters (of the owner named ``owner``, of the owner ``owner_id`` (a stable id,
    ``actor_of``), or everyone's), as the orchestrator lists them."""
    params = {"owner": owner, "owner_id": owner_id, "state": state, "product": product, "page_size": page_size,
              "page_token": page_token}
    return upstream_model(ClusterPage, orchestrator.request(
        "GET", "/clusters", params={k: v for k, v in params.items() if v is not None}))


@router.get("/{username}/{product}/{version}/{cluster_id}", responses=CLUSTER_ERRORS)
def get_cluster(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                orchestrator: OrchestratorDep) -> ClusterView:
    """The cluster: state (with a machine-readable reason when it failed), members, IPs, disks, ports."""
    return visible_cluster(orchestrator, user, username, product, version, cluster_id)


@router.delete("/{username}/{product}/{version}/{cluster_id}", status_code=202, responses={
    **CLUSTER_ERRORS, **error_responses(409, 422, descriptions={
        409: "keep_disks: you have a dataset of that name already (DATASET_EXISTS); other clusters of yours "
             "are bound to this one and force was not given (CLUSTER_IN_USE: details.bound_by names them)",
        422: "a parameter is not valid; `dataset` without keep_disks, or another name than the dataset the "
             "cluster attached (INVALID_OPTIONS)"})})
def delete_cluster(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                   orchestrator: OrchestratorDep,
                   keep_disks: Annotated[bool, Query(description="keep the members' disks, data and all, as a "
                                                     "dataset of yours instead of wiping them")] = False,
                   dataset: DatasetName = None,
                   force: Annotated[bool, Query(description="delete it even though other clusters of yours are "
                                                "bound to it (they run on without it; their pages say so)")] = False,
                   ) -> ClusterView:
    """Stop and destroy the cluster: containers, IPs and disks (wiped) are released asynchronously.
    With ``keep_disks`` the disks are kept as your dataset ``dataset`` (default: the cluster's id;
    the dataset the cluster attached, if any), counted against your disk quota, for a later launch
    of the same product to attach (``options.dataset``). A cluster others of yours are bound to (e.g.
    the HDFS a Spark cluster reads) is deleted only with ``force``."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    params = {"keep_disks": "true"} if keep_disks else {}
    if force:
        params["force"] = "true"
    if dataset is not None:
        params["dataset"] = dataset
    return upstream_model(ClusterView, orchestrator.request("DELETE", f"/clusters/{segment(cluster_id)}",
                                                            params=params))


@router.post("/{username}/{product}/{version}/{cluster_id}/stop", status_code=202, responses={
    **CLUSTER_ERRORS, **error_responses(409, descriptions={
        409: "the cluster is not running: only a RUNNING, DEGRADED or RESIZING one can be stopped "
             "(CLUSTER_NOT_RUNNING)"})})
def stop_cluster(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                 orchestrator: OrchestratorDep) -> ClusterView:
    """Stop the cluster: its jobs and containers stop; its members keep their disks (data and all) and
    floating IPs. A STOPPED cluster counts against your quota with its disks and IPs, not its cpus
    and memory. A repeat changes nothing."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return upstream_model(ClusterView, orchestrator.request("POST", f"/clusters/{segment(cluster_id)}/stop"))


@router.post("/{username}/{product}/{version}/{cluster_id}/start", status_code=202, responses={
    **CLUSTER_ERRORS, **error_responses(403, 409, descriptions={
        403: "its cpus and memory would pass your quota (QUOTA_EXCEEDED)",
        409: "the cluster is not stopped (CLUSTER_NOT_STOPPED)"})})
def start_cluster(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                  orchestrator: OrchestratorDep) -> ClusterView:
    """Start a stopped cluster: each member is launched again on its node, on its kept disks, with its
    floating IP and DNS name (it waits, QUEUED, while its node lacks the cpus or memory)."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return upstream_model(ClusterView, orchestrator.request("POST", f"/clusters/{segment(cluster_id)}/start"))


@router.get("/{username}/{product}/{version}/{cluster_id}/events", response_model=list[ClusterEvent],
            responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}},
                             "description": "the timeline; with Accept: text/event-stream or ?stream=true, "
                                            "a live SSE stream that ends when the cluster settles"},
                       **CLUSTER_ERRORS,
                       **error_responses(429, descriptions={
                           429: "the caller has as many live streams open as one user may (TOO_MANY_STREAMS); "
                                "close one, or retry after Retry-After"})})
def cluster_events(username: Username, product: Product, version: Version, cluster_id: ClusterId, request: Request,
                   user: CurrentUser, orchestrator: OrchestratorDep, settings: SettingsDep, session: SessionDep,
                   after_seq: Annotated[int, Query(ge=0)] = 0, stream: bool = False, follow: bool = False,
                   last_event_id: Annotated[int | None, Header(ge=0)] = None) -> Any:
    """The per-member, per-step event timeline after ``after_seq``. As a stream it ends when the
    cluster settles (RUNNING, FAILED, DESTROYED), or with ``follow=true`` only once it is DESTROYED
    (member replacements and jobs of a running cluster keep arriving)."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    if stream or "text/event-stream" in request.headers.get("accept", ""):
        start = last_event_id if last_event_id is not None else after_seq
        # Dependencies are left only after the whole response is sent: give back the request's
        # database connection and client now, or every open stream would hold them.
        session.close()
        orchestrator.close()
        body = _event_stream(settings, user, cluster_id, start, follow)
        limiter = request.app.state.streams
        if not limiter.try_open(user.username, body):
            raise ApiError(429, "TOO_MANY_STREAMS", f"you have {limiter.per_user} event streams open, as many as "
                           "one user may; close one first", {"limit": limiter.per_user}, headers={"Retry-After": "5"})
        return StreamingResponse(body, media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return orchestrator.request("GET", f"/clusters/{cluster_id}/events", params={"after_seq": after_seq})


async def _event_stream(settings: Settings, user: User, cluster_id: str, after_seq: int,
                        follow: bool = False) -> AsyncIterator[bytes]:
    """SSE: the orchestrator's live stream of the cluster's timeline, passed through as it arrives
    (each event as it is committed; a final ``event: end`` carries the settled cluster). Async, so
    an open stream holds no worker thread. (Its own client: the request's dependencies are gone
    while it streams.)"""
    headers = internal_headers(settings.internal_token, actor_of(user), "service", settings.identity_key)
    try:
        async with httpx.AsyncClient(base_url=settings.orchestrator_url, headers=headers, verify=default_tls(),
                                     timeout=httpx.Timeout(10.0, read=None)) as client:
            async with client.stream("GET", f"/clusters/{cluster_id}/events/stream",
                                     params={"after_seq": after_seq, "follow": follow}) as upstream:
                if upstream.status_code != 200:
                    yield _sse_error(upstream.status_code, "the orchestrator refused the stream")
                    return
                async for chunk in upstream.aiter_raw():
                    yield chunk
    except httpx.HTTPError as exc:
        # A clean end the client can read (and resume from its Last-Event-ID), not a cut stream.
        yield _sse_error(502, f"the orchestrator's stream broke: {type(exc).__name__}")


def _sse_error(status: int, message: str) -> bytes:
    return f"event: error\ndata: {json.dumps({'status': status, 'message': message})}\n\n".encode()


class Resize(Model):
    roles: dict[Annotated[str, Field(pattern=ROLE_PATTERN)], Annotated[int, Field(ge=0, le=10_000)]] = Field(
        min_length=1, max_length=64, examples=[{"worker": 4}],
        description="role → how many members of it the cluster should have (within the role's min and max)")


RESIZE_ERRORS = {**CLUSTER_ERRORS, **error_responses(400, 403, 409, 413, 422, descriptions={
    403: "the members it adds would pass your quota (QUOTA_EXCEEDED)",
    409: "the cluster is not running: only a RUNNING, DEGRADED or RESIZING one can be resized (CLUSTER_NOT_RUNNING)",
    422: "a role the product does not have, or a count outside the role's min and max (INVALID_OPTIONS); more "
         "members of a role kept apart than nodes to take them (REPLICAS_CANNOT_BE_APART)"})}


@router.post("/{username}/{product}/{version}/{cluster_id}/resize", status_code=202, responses=RESIZE_ERRORS)
def resize_cluster(username: Username, product: Product, version: Version, cluster_id: ClusterId, body: Resize,
                   user: CurrentUser, orchestrator: OrchestratorDep) -> ClusterView:
    """Change how many members of a role the running cluster has (RESIZING, then RUNNING): added members
    get fresh disks and floating IPs and are placed like the others (its placement option, the members
    already running counted); members beyond a lowered count (the highest indexes) are stopped and
    their disks wiped; then every member whose config names its peers gets it again and its product's
    reload runs."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return upstream_model(ClusterView, orchestrator.request("POST", f"/clusters/{segment(cluster_id)}/resize",
                                                            json=body.model_dump()))


@router.post("/{username}/{product}/{version}/{cluster_id}/resize/plan", responses=RESIZE_ERRORS)
def plan_resize(username: Username, product: Product, version: Version, cluster_id: ClusterId, body: Resize,
                user: CurrentUser, orchestrator: OrchestratorDep, catalog: CatalogDep, settings: SettingsDep) -> Plan:
    """Dry-run a resize: where the members it adds would go on the resources offered now (the members
    already running counted, as the resize will), or why each node refuses them; nothing is held. A
    resize that only removes members plans nothing (``placeable`` true, no members)."""
    cluster = visible_cluster(orchestrator, user, username, product, version, cluster_id)
    manifest = catalog.get(cluster.product, cluster.version)
    unknown = sorted(set(body.roles) - set(manifest["roles"]))
    if unknown:
        raise ApiError(422, "INVALID_OPTIONS", f"{cluster.product} has no role {', '.join(unknown)}",
                       {"errors": [{"path": f"roles.{r}", "message": "no such role"} for r in unknown]})
    options = resolved_options(manifest, with_counts(dict(cluster.options), body.roles))
    options = for_the_platform(settings, user, manifest, options)
    have = {(m.role, m.member_id.rsplit("-", 1)[-1]) for m in cluster.members}
    adding = [m for m in member_requests(manifest, options) if (m["role"], str(m["index"])) not in have]
    if not adding:
        return Plan(placeable=True, summary="nothing to place: the resize adds no member", members=[], reasons=[])
    members = [{"member_id": f"{cluster.id}-{m['role']}-{m['index']}", "role": m["role"], "cpus": m["cpus"],
                "mem_mb": m["mem_mb"], "disks": m["disks"], "container": {"image": manifest["image"]}} for m in adding]
    with service_client(settings, "scheduler", user) as scheduler:
        return upstream_model(Plan, scheduler.request("POST", "/placements/dry-run", json={
            "cluster_id": cluster.id, **ClusterSpec.placement_fields(options), "members": members}), "scheduler")
