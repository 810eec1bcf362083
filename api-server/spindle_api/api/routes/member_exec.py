"""A command run in a member (``spindle exec``), its output streamed back as NDJSON, and the record
of every one.

Only the cluster's owner (and admins) may run one; others' clusters are 404 like every cluster
route, and so is a member the cluster does not have. Each exec is recorded (``member_execs``: who,
which member, the argv as given) before it runs and completed with its exit code when its stream
ends; the owner reads a cluster's records, admins everyone's. The command runs on the member's node:
its Mesos agent starts it in the container (``spindle_mesos_embedded.container_exec``: an argv, no
tty, never privileged, as the member's own user, within the member's limits) and kills it at its
timeout; the api-server passes the agent's lines on as they come, under the per-user stream cap."""
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any

import anyio
import httpx
from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse
from pydantic import Field, field_validator

from spindle_api import member_execs
from spindle_api.api.deps import AdminUser, CurrentUser, OrchestratorDep, SessionDep, SettingsDep
from spindle_api.api.params import USERNAME_PATTERN, ClusterId, Product, Username, Version
from spindle_api.api.routes.clusters import CLUSTER_ERRORS, visible_cluster
from spindle_api.api.routes.member_logs import MemberName, member_agent, raise_for_node
from spindle_api.core.config import Settings
from spindle_api.models import MemberExec, User
from spindle_common.clients import ServiceClient
from spindle_common.contracts import ClusterState, ClusterView, MemberView, Model, Timestamp
from spindle_common.errors import ApiError, error_responses
from spindle_common.tls import default_tls

router = APIRouter()

# A cluster in these states has its members' containers (or is starting or replacing them).
EXEC_STATES = frozenset({ClusterState.DEPLOYING, ClusterState.CONFIGURING, ClusterState.RUNNING,
                         ClusterState.DEGRADED})
MAX_ARGS, MAX_ARG_CHARS, MAX_TIMEOUT_S = 64, 4096, 3600  # as the agent's (container_exec)
MAX_RECORDS = 500
# How long the node may be silent beyond the command's timeout (its kill, its exit code) before the
# stream counts as broken.
SILENCE_SLACK_S = 60

Arg = Annotated[str, Field(max_length=MAX_ARG_CHARS, pattern=r"^[^\x00]*$")]
RecordLimit = Annotated[int, Query(ge=1, le=MAX_RECORDS, description="the newest N records")]
UserFilter = Annotated[str | None, Query(pattern=USERNAME_PATTERN, description="only those this user ran")]
OwnerFilter = Annotated[str | None, Query(pattern=USERNAME_PATTERN, description="only those in this user's clusters")]


class ExecCommand(Model):
    command: list[Arg] = Field(min_length=1, max_length=MAX_ARGS, examples=[["sh", "-c", "df -h /data/1"]],
                               description="the program and its arguments, as they are: no shell unless you name "
                                           "one; no NUL characters")
    timeout_s: int = Field(300, ge=1, le=MAX_TIMEOUT_S,
                           description="seconds it may run; then it is killed (exit code 137, timed_out)")

    @field_validator("command")
    @classmethod
    def _has_a_program(cls, command: list[str]) -> list[str]:
        if not command[0]:
            raise ValueError("command[0], the program, is empty")
        return command


class ExecKind(StrEnum):
    exec = "exec"
    terminal = "terminal"


class ExecRecord(Model):
    """One command run in a member, as recorded before it ran and when it ended."""

    id: int
    started_at: Timestamp
    username: str = Field(description="who ran it: the cluster's owner, or an admin")
    cluster_id: str
    cluster_owner: str
    member_id: str
    command: list[str]
    kind: ExecKind = Field(description="a command (`…/exec`, command as given) or an interactive terminal session "
                                       "(`…/terminal`, command [\"<terminal>\"])")
    finished_at: Timestamp | None = Field(description="null while it runs (or if its end was never seen)")
    exit_code: int | None = Field(description="null when it never ran or its end was not seen (see error)")
    timed_out: bool = Field(description="killed at its timeout")
    error: str | None = Field(description="why there is no exit code: the refusal's code (e.g. NO_CONTAINER, "
                                          "NODE_UNREACHABLE) or STREAM_BROKEN")


def exec_record(row: MemberExec) -> ExecRecord:
    return ExecRecord(id=row.id, started_at=row.started_at, username=row.username, cluster_id=row.cluster_id,
                      cluster_owner=row.cluster_owner, member_id=row.member_id, command=row.argv,
                      kind=ExecKind(row.kind), finished_at=row.finished_at,
                      exit_code=row.exit_code, timed_out=row.timed_out, error=row.error)


@router.post("/clusters/{username}/{product}/{version}/{cluster_id}/members/{member}/exec", tags=["clusters"],
             responses={
    200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}},
          "description": "NDJSON, one JSON object a line, as the command runs: `{\"stream\": \"stdout\"|\"stderr\", "
                         "\"data\": \"…\"}` per chunk of output (UTF-8 text), then `{\"exit_code\": N}` (with "
                         "`\"timed_out\": true` when it was killed at timeout_s, `\"truncated\": true` when it was "
                         "killed for writing more than 16 MiB; exit_code null if it could not be known), or "
                         "`{\"error\": {\"code\", \"message\"}}` if the node stopped answering"},
    **CLUSTER_ERRORS,
    **error_responses(400, 404, 409, 413, 422, 429, 502, 503, descriptions={
        404: "no such cluster or member you may see (CLUSTER_NOT_FOUND, MEMBER_NOT_FOUND), or the member has no "
             "running container now (NO_CONTAINER)",
        409: "the cluster has no containers in its state (CLUSTER_NOT_RUNNING), or the member is on no node "
             "(MEMBER_NOT_PLACED)",
        429: "as many live streams open as one user may (TOO_MANY_STREAMS)",
        502: "the member's node or an internal service failed (NODE_ERROR, UPSTREAM_FAILED)",
        503: "the member's node or an internal service is unreachable (NODE_UNREACHABLE)"})},
    response_class=Response)
async def member_exec(username: Username, product: Product, version: Version, cluster_id: ClusterId,
                      member: MemberName, body: ExecCommand, request: Request, user: CurrentUser,
                      orchestrator: OrchestratorDep, settings: SettingsDep, session: SessionDep) -> Response:
    """Run a command in the member's container, as the member's own user, within its limits (pids, memory,
    CPU; no capabilities it does not have), and stream its output. Recorded before it runs (`…/execs`)."""
    cluster, found, url = await run_in_threadpool(exec_target, orchestrator, settings, user, username, product,
                                                  version, cluster_id, member)
    orchestrator.close()
    run = _Exec(settings.database_url, found)
    stream = _relay(run)
    limiter = request.app.state.streams
    if not limiter.try_open(user.username, stream):
        raise ApiError(429, "TOO_MANY_STREAMS", f"you have {limiter.per_user} streams open, as many as one user "
                       "may; close one first", {"limit": limiter.per_user}, headers={"Retry-After": "5"})
    argv = list(body.command)
    run.record_id = await run_in_threadpool(member_execs.record_start, session, user.username, cluster.id,
                                            cluster.owner, found.member_id, argv)
    session.close()
    await _open(run, f"{url}/spindle/v1/containers/spindle-{found.member_id}/exec",
                {"argv": argv, "timeout_s": body.timeout_s}, settings.internal_token, body.timeout_s)
    return StreamingResponse(stream, media_type="application/x-ndjson",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/clusters/{username}/{product}/{version}/{cluster_id}/execs", tags=["clusters"],
            responses=CLUSTER_ERRORS)
def cluster_execs(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
                  orchestrator: OrchestratorDep, session: SessionDep, limit: RecordLimit = 100) -> list[ExecRecord]:
    """The commands run in the cluster's members, newest first: who ran what, when, and how it ended."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return [exec_record(row) for row in member_execs.recorded_execs(session, limit, cluster_id=cluster_id)]


@router.get("/admin/execs", tags=["admin: clusters"], responses=error_responses(401, 403, 422))
def all_execs(_: AdminUser, session: SessionDep, username: UserFilter = None, owner: OwnerFilter = None,
              limit: RecordLimit = 100) -> list[ExecRecord]:
    """The commands run in every user's members (or those ``username`` ran, or ran in ``owner``'s
    clusters), newest first."""
    return [exec_record(row) for row in
            member_execs.recorded_execs(session, limit, username=username, cluster_owner=owner)]


def exec_target(orchestrator: ServiceClient, settings: Settings, user: User, username: str, product: str,
                version: str, cluster_id: str, member: str) -> tuple[ClusterView, MemberView, str]:
    """The cluster (the caller's, or 404), the member and its node's agent; 409 unless the cluster
    has containers."""
    cluster = visible_cluster(orchestrator, user, username, product, version, cluster_id)
    if cluster.state not in EXEC_STATES:
        raise ApiError(409, "CLUSTER_NOT_RUNNING", f"cluster {cluster.id} is {cluster.state}: its members have no "
                       "containers to run a command in", {"state": cluster.state})
    found, url = member_agent(settings, user, cluster, member)
    return cluster, found, url


@dataclass
class _Exec:
    """One exec as the api-server relays it: its record, and the node's answer once it is open."""

    database_url: str
    member: MemberView
    record_id: int = 0
    client: httpx.AsyncClient | None = None
    upstream: httpx.Response | None = None


async def _open(run: _Exec, url: str, payload: dict, token: str, timeout_s: int) -> None:
    """Ask the node's agent to run it; its refusal is the public API's error (and the record's)."""
    client = httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=timeout_s + SILENCE_SLACK_S), verify=default_tls())
    try:
        try:
            upstream = await client.send(client.build_request(
                "POST", url, json=payload, headers={"Authorization": f"Bearer {token}"}), stream=True)
        except httpx.HTTPError as exc:
            raise ApiError(503, "NODE_UNREACHABLE", f"node {run.member.node} does not answer: {type(exc).__name__}",
                           {"node": run.member.node}) from exc
        if upstream.status_code != 200:
            text = (await upstream.aread()).decode(errors="replace")
            await upstream.aclose()
            if upstream.status_code == 409:  # the container is there, not running
                raise ApiError(404, "NO_CONTAINER", f"{run.member.member_id} has no running container on node "
                               f"{run.member.node} now", {"node": run.member.node})
            raise_for_node(upstream.status_code, run.member, text)
    except ApiError as refusal:
        await client.aclose()
        await _record_end(run, None, error=refusal.code)
        raise
    run.client, run.upstream = client, upstream


async def _relay(run: _Exec) -> AsyncIterator[bytes]:
    """The agent's NDJSON lines as they come; an ``error`` line when the node stops answering before
    the end. The record is completed however the stream ends (the caller gone too): at the exit code,
    before the caller gets it (who then lists the member's execs finds it ended), else at the end."""
    recorded = False  # the agent's exit code seen, and the record completed with it
    try:
        assert run.upstream is not None
        async for line in run.upstream.aiter_lines():
            if not line:
                continue
            end = _end_of(line)
            if end is not None and not recorded:
                recorded = True
                exit_code = end.get("exit_code")
                with anyio.CancelScope(shield=True):
                    await _record_end(run, exit_code if isinstance(exit_code, int) else None,
                                      bool(end.get("timed_out")))
            yield line.encode() + b"\n"
        if not recorded:
            yield _line({"error": {"code": "STREAM_BROKEN",
                                   "message": f"node {run.member.node} ended the output before the exit code"}})
    except httpx.HTTPError as exc:
        yield _line({"error": {"code": "NODE_UNREACHABLE",
                               "message": f"node {run.member.node} stopped answering: {type(exc).__name__}"}})
    finally:
        with anyio.CancelScope(shield=True):  # the caller may be gone: this still runs to its end
            if run.upstream is not None:
                await run.upstream.aclose()
            if run.client is not None:
                await run.client.aclose()
            if not recorded:
                await _record_end(run, None, error="STREAM_BROKEN")


def _end_of(line: str) -> dict[str, Any] | None:
    """The agent's last line (``{"exit_code": …}``), or None for any other."""
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return data if isinstance(data, dict) and "exit_code" in data else None


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data).encode() + b"\n"


async def _record_end(run: _Exec, exit_code: int | None, timed_out: bool = False, error: str | None = None) -> None:
    """Complete the record in a session of its own (the request's is closed while it streams)."""
    await member_execs.finish(run.database_url, run.record_id, exit_code, timed_out, error)
