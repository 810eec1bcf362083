"""A terminal in a member (the web UI's "Terminal"): a WebSocket at
``/clusters/{username}/{product}/{version}/{cluster_id}/members/{member}/terminal`` relayed to the
member's node's agent, which runs a shell with a tty in the member's container as its own user,
within its limits (``spindle_mesos_embedded.container_terminal``); the frames are those of
``spindle_common.terminal`` on both hops. WebSocket routes are not in the OpenAPI document: README.md
("REST API") and docs/ARCHITECTURE.md ("Next", shells) describe this one.

**The token.** Browsers cannot set ``Authorization`` on a WebSocket, and a token in the URL would
end in logs and histories; so, as Kubernetes does (``base64url.bearer.authorization.k8s.io``), it
comes as a subprotocol: the client offers ``spindle.terminal, bearer.<token>`` and the server
accepts ``spindle.terminal`` alone (the token is never echoed). It is checked as every route's
(``deps.signed_in``: 401 unknown, revoked, expired).

**The origin.** A WebSocket is not bound by the same-origin policy: a page of any site may open one
to this server. It cannot offer a token it does not have, but the check costs nothing and stops
cross-site WebSocket hijacking should a browser ever send credentials of its own: an ``Origin``
header (browsers always send it) must be this server's own (the request's ``Host``); none at all
(not a browser) is allowed.

Every refusal happens before the WebSocket is accepted, as an HTTP answer in the error envelope:
403 ORIGIN_NOT_ALLOWED, 401, 422 VALIDATION_FAILED, 400 SUBPROTOCOL_REQUIRED, 429 TOO_MANY_STREAMS
(the session counts under the per-user stream cap), then the cluster's and member's as ``…/exec``
answers them (404 CLUSTER_NOT_FOUND / MEMBER_NOT_FOUND for what the caller may not see, 409
CLUSTER_NOT_RUNNING / MEMBER_NOT_PLACED) and the node's (404 NO_CONTAINER, 502 NODE_ERROR, 503
NODE_UNREACHABLE). A session is recorded (``member_execs``, kind ``terminal``) before the node is
asked, and completed when it ends: the exit code and ``timed_out`` (idle or too long) when the agent
ended it, error ``CLOSED`` when the caller did (the shell is killed), ``STREAM_BROKEN`` when the
node stopped answering."""
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio
from fastapi import APIRouter, WebSocket
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException

from spindle_api import member_execs
from spindle_api.api.deps import signed_in
from spindle_api.api.params import CLUSTER_ID_PATTERN, PRODUCT_PATTERN, USERNAME_PATTERN, VERSION_PATTERN
from spindle_api.api.routes.member_exec import exec_target
from spindle_api.api.routes.member_logs import MEMBER_PATTERN, raise_for_node
from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.upstream import service_client
from spindle_common.contracts import ClusterView, MemberView
from spindle_common.db import session_factory
from spindle_common.errors import ApiError, envelope
from spindle_common.terminal import CLOSE_FAILED, CLOSE_NORMAL, PEER_GONE, deny, error_frame, first_of, parse_end

log = logging.getLogger("spindle.terminal")
router = APIRouter()

SUBPROTOCOL = "spindle.terminal"
BEARER = "bearer."
PARAMS = {"username": USERNAME_PATTERN, "product": PRODUCT_PATTERN, "version": VERSION_PATTERN,
          "cluster_id": CLUSTER_ID_PATTERN, "member": MEMBER_PATTERN}
# How long the node's agent may take to accept (the shell started in the container).
OPEN_TIMEOUT_S = 15


def origin_allowed(origin: str | None, host: str | None) -> bool:
    """Whether a WebSocket with this ``Origin`` may be opened at this ``Host``: no origin (not a
    browser), or the same host and port (a scheme's default port when it names none)."""
    if origin is None:
        return True
    try:
        page, asked = urlsplit(origin.strip()), urlsplit(f"//{host or ''}")
        if page.scheme not in ("http", "https") or not page.hostname or not asked.hostname:
            return False
        default = 443 if page.scheme == "https" else 80
        return page.hostname == asked.hostname and (page.port or default) == (asked.port or default)
    except ValueError:  # a port that is no number
        return False


def offered_token(subprotocols: Sequence[str]) -> str:
    """The API token offered as the subprotocol ``bearer.<token>``; 401 without exactly one."""
    tokens = [offered[len(BEARER):] for offered in subprotocols if offered.startswith(BEARER)]
    if len(tokens) != 1 or not tokens[0]:
        raise ApiError(401, "UNAUTHENTICATED", f"offer your API token as the WebSocket subprotocol "
                       f"'{BEARER}<token>', beside '{SUBPROTOCOL}' (once)")
    return tokens[0]


def check_params(values: dict[str, str]) -> None:
    """The path's values have the shapes of the REST routes' (params.py); 422 naming each that has not."""
    errors = [{"field": f"path.{name}", "problem": f"does not match {pattern}"}
              for name, pattern in PARAMS.items() if not re.match(pattern, values[name])]
    if errors:
        raise ApiError(422, "VALIDATION_FAILED", "the request is not valid", {"errors": errors})


class _Place:
    """The session's place under the per-user stream cap (``StreamLimiter.hold``), once it has one."""

    def __init__(self) -> None:
        self.release: Callable[[], None] = lambda: None


@router.websocket("/clusters/{username}/{product}/{version}/{cluster_id}/members/{member}/terminal")
async def member_terminal(websocket: WebSocket, username: str, product: str, version: str, cluster_id: str,
                          member: str) -> None:
    """A shell in the member's container (the module's docstring)."""
    settings: Settings = websocket.app.state.settings
    place = _Place()
    try:
        try:
            agent, record_id, found = await _open(websocket, settings, place, {
                "username": username, "product": product, "version": version, "cluster_id": cluster_id,
                "member": member})
        except ApiError as refusal:
            await _deny(websocket, refusal)
            return
        except SQLAlchemyError as exc:  # as the app's handlers answer it on the other routes
            log.warning("terminal refused: the database failed: %s", type(exc).__name__)
            await _deny(websocket, ApiError(503, "UNAVAILABLE", "the service is busy or its database unreachable; "
                                            "try again shortly", headers={"Retry-After": "1"}))
            return
        # Unless the relay says otherwise: the caller went before the agent said how the shell ended.
        ended: tuple[int | None, bool, str | None] = (None, False, "CLOSED")
        recorded = False

        async def record(exit_code: int | None, timed_out: bool, error: str | None) -> None:
            nonlocal recorded
            recorded = True
            await member_execs.finish(settings.database_url, record_id, exit_code, timed_out, error)

        try:
            await websocket.accept(subprotocol=SUBPROTOCOL)
            ended = await relay(websocket, agent, found, record)
        finally:
            with anyio.CancelScope(shield=True):  # the caller may be gone: this still runs to its end
                await agent.close()
                if not recorded:
                    await member_execs.finish(settings.database_url, record_id, *ended)
    finally:
        place.release()


async def _deny(websocket: WebSocket, refusal: ApiError) -> None:
    """The refusal as the HTTP answer to the upgrade, in the error envelope (the caller may be gone)."""
    with contextlib.suppress(*PEER_GONE):
        await deny(websocket, JSONResponse(envelope(refusal.code, refusal.message, refusal.details),
                                           status_code=refusal.status, headers=refusal.headers or None))


async def _open(websocket: WebSocket, settings: Settings, place: _Place,
                params: dict[str, str]) -> tuple[ClientConnection, int, MemberView]:
    """Every check, the record, and the node's agent's WebSocket; an ApiError for the first refusal."""
    if not origin_allowed(websocket.headers.get("origin"), websocket.headers.get("host")):
        raise ApiError(403, "ORIGIN_NOT_ALLOWED", "a terminal opens only from a page of this server "
                       f"(Origin {websocket.headers.get('origin', '')[:200]!r} is another)")
    offered = websocket.scope.get("subprotocols") or []
    user = await run_in_threadpool(_sign_in, settings, offered_token(offered))
    check_params(params)
    if SUBPROTOCOL not in offered:
        raise ApiError(400, "SUBPROTOCOL_REQUIRED", f"offer the WebSocket subprotocol '{SUBPROTOCOL}'")
    limiter = websocket.app.state.streams
    release = limiter.hold(user.username)
    if release is None:
        raise ApiError(429, "TOO_MANY_STREAMS", f"you have {limiter.per_user} streams open, as many as one user "
                       "may; close one first", {"limit": limiter.per_user}, headers={"Retry-After": "5"})
    place.release = release
    cluster, found, url = await run_in_threadpool(_target, settings, user, params)
    record_id = await run_in_threadpool(_record, settings, user, cluster, found)
    try:
        agent = await connect_agent(url, found, settings.internal_token)
    except ApiError as refusal:
        await member_execs.finish(settings.database_url, record_id, None, error=refusal.code)
        raise
    return agent, record_id, found


def _sign_in(settings: Settings, token: str) -> User:
    with session_factory(settings.database_url)() as session:
        return signed_in(session, token)


def _target(settings: Settings, user: User, params: dict[str, str]) -> tuple[ClusterView, MemberView, str]:
    with service_client(settings, "orchestrator", user) as orchestrator:
        return exec_target(orchestrator, settings, user, **params)


def _record(settings: Settings, user: User, cluster: ClusterView, member: MemberView) -> int:
    with session_factory(settings.database_url)() as session:
        return member_execs.record_start(session, user.username, cluster.id, cluster.owner, member.member_id,
                                         member_execs.TERMINAL_ARGV, kind="terminal")


async def connect_agent(agent_url: str, member: MemberView, token: str) -> ClientConnection:
    """The node's agent's terminal WebSocket for the member's container; its refusal as the public API's."""
    url = f"ws://{agent_url.removeprefix('http://')}/spindle/v1/containers/spindle-{member.member_id}/terminal"
    try:
        return await connect(url, additional_headers={"Authorization": f"Bearer {token}"},
                             open_timeout=OPEN_TIMEOUT_S, compression=None)
    except InvalidStatus as exc:
        status, text = exc.response.status_code, (exc.response.body or b"").decode(errors="replace")
        raise_for_node(404 if status == 409 else status, member, text)  # 409: there, but not running
        raise ApiError(502, "NODE_ERROR", f"node {member.node} answered {status} without a WebSocket",
                       {"node": member.node}) from exc
    except (OSError, TimeoutError, WebSocketException) as exc:
        raise ApiError(503, "NODE_UNREACHABLE", f"node {member.node} does not answer: {type(exc).__name__}",
                       {"node": member.node}) from exc


async def relay(websocket: WebSocket, agent: ClientConnection, member: MemberView,
                record: Callable[[int | None, bool, str | None], Awaitable[None]]) -> tuple[int | None, bool,
                                                                                            str | None]:
    """The caller's frames to the agent and the agent's to the caller, until either ends; then the
    other is closed. How the session ended, for its record: (exit code, timed out, error). The agent's
    end frame is ``record``ed before the caller gets it: a caller who saw the session end and then
    lists the member's execs finds it ended (the browser test did not, in CI run 36)."""
    end: dict[str, Any] | None = None

    async def from_agent() -> str:
        nonlocal end
        try:
            async for frame in agent:
                if isinstance(frame, str):
                    parsed = parse_end(frame)
                    if parsed is not None and end is None:
                        end = parsed
                        await record(end["exit_code"], end["reason"] in ("idle", "max_duration"), None)
                    await websocket.send_text(frame)
                else:
                    await websocket.send_bytes(frame)
        except ConnectionClosed:
            return "agent"
        except PEER_GONE:
            return "caller"
        return "agent"

    async def from_caller() -> str:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return "caller"
            data: bytes | str | None = message.get("bytes")
            if data is None:
                data = message.get("text")
            if data is None:
                continue
            try:
                await agent.send(data)
            except ConnectionClosed:
                return "agent"

    ended_by = await first_of(from_agent, from_caller)
    if ended_by == "caller":
        return None, False, "CLOSED"
    with contextlib.suppress(*PEER_GONE):
        if end is not None:
            await websocket.close(CLOSE_NORMAL)
        else:
            await websocket.send_text(error_frame("STREAM_BROKEN", f"node {member.node} ended the terminal "
                                                  "without saying how"))
            await websocket.close(CLOSE_FAILED)
    if end is None:
        log.warning("terminal in %s: node %s ended it without its end frame", member.member_id, member.node)
        return None, False, "STREAM_BROKEN"
    return end["exit_code"], end["reason"] in ("idle", "max_duration"), None
