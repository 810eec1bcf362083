"""A member's logs: the last lines, lines since a time, or a live SSE stream of new lines.

Only the cluster's owner (and admins) may read them; others' clusters are 404 like every cluster
route, and so is a member the cluster does not have. The lines come from the member's node: its
Mesos agent reads them from that node's dockerd (``spindle_mesos_embedded.container_logs``), the
api-server asks it with the internal token, after deciding the caller may see them."""
import json
from collections.abc import AsyncIterator
from typing import Annotated

import httpx
from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse

from spindle_api.api.deps import CurrentUser, OrchestratorDep, SessionDep, SettingsDep
from spindle_api.api.params import ClusterId, Product, Username, Version
from spindle_api.api.routes.clusters import CLUSTER_ERRORS, visible_cluster
from spindle_api.core.config import Settings
from spindle_api.upstream import service_client
from spindle_common.contracts import ClusterView, MemberView
from spindle_common.errors import ApiError, error_responses
from spindle_common.tls import default_tls

router = APIRouter(prefix="/clusters", tags=["clusters"])

MEMBER_PATTERN = r"^[a-z0-9][a-z0-9-]{0,127}$"
MemberName = Annotated[str, Path(pattern=MEMBER_PATTERN, max_length=128,
                                 description="the member's id, or its name in the cluster (worker-1)")]
MAX_TAIL = 10_000
MAX_SINCE = 4_102_444_800  # 2100-01-01


def member_of(cluster: ClusterView, member: str) -> MemberView:
    """The member by id or by ``role-index`` name; 404 MEMBER_NOT_FOUND otherwise."""
    for candidate in cluster.members:
        if member in (candidate.member_id, candidate.member_id.removeprefix(f"{cluster.id}-")):
            return candidate
    raise ApiError(404, "MEMBER_NOT_FOUND", f"cluster {cluster.id} has no member {member}",
                   {"cluster_id": cluster.id, "member": member})


def agent_url(settings: Settings, user, node: str) -> str:
    """The Mesos agent of ``node`` (its address in disk-service, the agents' port)."""
    with service_client(settings, "disk-service", user) as disks:
        found = disks.request("GET", f"/nodes/{node}")
    return f"http://{found['address']}:{settings.mesos_agent_port}"


def member_agent(settings: Settings, user, cluster: ClusterView, member: str) -> tuple[MemberView, str]:
    """The member (``member_of``) and the URL of its node's agent; 409 MEMBER_NOT_PLACED when it is on
    no node now."""
    found = member_of(cluster, member)
    if not found.node:
        raise ApiError(409, "MEMBER_NOT_PLACED", f"{found.member_id} is on no node now", {"state": found.state})
    return found, agent_url(settings, user, found.node)


@router.get("/{username}/{product}/{version}/{cluster_id}/members/{member}/logs", responses={
    200: {"content": {"text/plain": {"schema": {"type": "string"}},
                      "text/event-stream": {"schema": {"type": "string"}}},
          "description": "the lines (RFC 3339 time, a space, the line), oldest first; with follow=true an SSE "
                         "stream: an `event: line` per line (its data the line as a JSON string), live, then "
                         "`event: end` when the member's container ends (`event: error` if its node fails)"},
    **CLUSTER_ERRORS,
    **error_responses(404, 409, 429, descriptions={
        404: "no such cluster or member you may see (CLUSTER_NOT_FOUND, MEMBER_NOT_FOUND), or the member has no "
             "container now (NO_CONTAINER)",
        409: "the member is not placed on a node (yet or any more) (MEMBER_NOT_PLACED)",
        429: "as many live streams open as one user may (TOO_MANY_STREAMS)"})},
    response_class=Response)
def member_logs(username: Username, product: Product, version: Version, cluster_id: ClusterId, member: MemberName,
                request: Request, user: CurrentUser, orchestrator: OrchestratorDep, settings: SettingsDep,
                session: SessionDep,
                tail: Annotated[int, Query(ge=0, le=MAX_TAIL, description="the last N lines")] = 200,
                since: Annotated[float | None, Query(ge=0, le=MAX_SINCE, allow_inf_nan=False,
                                                         description="lines from this unix time on")] = None,
                follow: Annotated[bool, Query(description="an SSE stream of new lines")] = False):
    """The member container's stdout and stderr as Docker keeps them (the last 30 MB at most)."""
    cluster = visible_cluster(orchestrator, user, username, product, version, cluster_id)
    found, url = member_agent(settings, user, cluster, member)
    path = f"/spindle/v1/containers/spindle-{found.member_id}/logs"
    params: dict = {"tail": tail, **({"since": since} if since is not None else {})}
    headers = {"Authorization": f"Bearer {settings.internal_token}"}
    if not follow:
        try:
            answer = httpx.get(f"{url}{path}", params=params, headers=headers, timeout=30, verify=default_tls())
        except httpx.HTTPError as exc:
            raise ApiError(503, "NODE_UNREACHABLE", f"node {found.node} does not answer: {type(exc).__name__}",
                           {"node": found.node}) from exc
        raise_for_node(answer.status_code, found, answer.text)
        return PlainTextResponse(answer.text)
    session.close()
    orchestrator.close()
    body = _follow(f"{url}{path}", {**params, "follow": "true"}, headers, found)
    limiter = request.app.state.streams
    if not limiter.try_open(user.username, body):
        raise ApiError(429, "TOO_MANY_STREAMS", f"you have {limiter.per_user} streams open, as many as one user "
                       "may; close one first", {"limit": limiter.per_user}, headers={"Retry-After": "5"})
    return StreamingResponse(body, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def raise_for_node(status: int, member: MemberView, text: str) -> None:
    """The node's agent's refusal as the public API's error: its 404 NO_CONTAINER, others 502 NODE_ERROR."""
    if status == 404:
        raise ApiError(404, "NO_CONTAINER", f"{member.member_id} has no container on node {member.node} now",
                       {"node": member.node})
    if status != 200:
        raise ApiError(502, "NODE_ERROR", f"node {member.node} answered {status}: {text[:200]}", {"node": member.node})


async def _follow(url: str, params: dict, headers: dict, member: MemberView) -> AsyncIterator[bytes]:
    """SSE: each line as one ``event: line`` (data: the line as a JSON string) as the node's agent
    passes it on; ``event: end`` when the container's log ends, ``event: error`` when the node cannot
    be read."""
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=None), verify=default_tls()) as client:
            async with client.stream("GET", url, params=params, headers=headers) as upstream:
                if upstream.status_code != 200:
                    yield _event("error", {"status": upstream.status_code, "message": "the node refused the logs"})
                    return
                async for text in upstream.aiter_lines():
                    yield _event("line", text)
        yield _event("end", {"member": member.member_id})
    except httpx.HTTPError as exc:
        yield _event("error", {"status": 503, "message": f"node {member.node} stopped answering: {type(exc).__name__}"})


def _event(kind: str, data: object) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()
