"""The agent's HTTP endpoints: the v1 executor API at /api/v1/executor (as a Mesos agent serves it
with ``--authenticate_http_executors``: each call carries ``Authorization: Bearer <the token the
agent gave that executor>``, else 401), /health, and Spindle's own: a member container's logs on
this node (``spindle_mesos_embedded.container_logs``), a command run in it
(``spindle_mesos_embedded.container_exec``), a shell over a WebSocket
(``spindle_mesos_embedded.container_terminal``) and its config files replaced after a resize
(``spindle_mesos_embedded.container_files``)."""
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any, TypeVar

import docker
from docker.errors import DockerException
from fastapi import FastAPI, Request, WebSocket
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response, StreamingResponse

from spindle_common.terminal import deny
from spindle_mesos_embedded import container_exec as container_exec_module
from spindle_mesos_embedded import container_files as container_files_module
from spindle_mesos_embedded import container_logs as container_logs_module
from spindle_mesos_embedded import container_terminal as container_terminal_module
from spindle_mesos_embedded import protocol
from spindle_mesos_embedded.agent import Agent
from spindle_mesos_embedded.master import HEARTBEAT_S
from spindle_mesos_embedded.recordio import event_stream

T = TypeVar("T")


def _bad(message: str, status_code: int = 400) -> Response:
    return Response(message, status_code=status_code, media_type="text/plain")


# What starting an exec may raise besides a bug: the container is not there (or not Spindle's), not
# running, or Docker refused.
REFUSALS = (container_logs_module.NoSuchContainer, container_exec_module.ContainerNotRunning, DockerException)


def _refused(name: str, exc: Exception) -> Response:
    """Docker's refusal to start an exec in the container ``name`` as the agent's answer."""
    if isinstance(exc, container_logs_module.NoSuchContainer):
        return _bad(f"no Spindle container {name} on this node", 404)
    if isinstance(exc, container_exec_module.ContainerNotRunning):
        return _bad(f"the container {name} is not running", 409)
    return _bad(f"Docker refused the exec: {exc}"[:500], 502)


def build_agent_app(agent: Agent, docker_client: Callable[[], docker.DockerClient] = docker.from_env) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        await agent.start()
        yield
        await agent.stop()

    app = FastAPI(title="Spindle embedded Mesos agent", lifespan=lifespan)

    async def _platform_request(request: Request, what: str, parse: Callable[[Any], T | str]) -> T | Response:
        """The JSON body of a call only the platform makes (the internal token), as ``parse`` reads it;
        or the refusal: 401 without the token, 400 for a body that is not JSON or that ``parse`` refuses."""
        if not agent.token or not protocol.authorized(agent.token, request.headers.get("authorization")):
            return _bad(f"{what} are for the platform (the internal token)", 401)
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _bad("body is not JSON")
        parsed = parse(body)
        return _bad(parsed) if isinstance(parsed, str) else parsed

    @app.post("/api/v1/executor")
    async def executor(request: Request) -> Response:
        try:
            call = json.loads(await request.body())
        except ValueError:
            return _bad("body is not JSON")
        if not isinstance(call, dict):
            return _bad("body is not a JSON object")
        if not agent.executor_authorized(call, request.headers.get("authorization")):
            return _bad("executor calls need the executor's MESOS_EXECUTOR_AUTHENTICATION_TOKEN", 401)
        if call.get("type") == "SUBSCRIBE":
            queue = agent.executor_subscribe(call)
            if isinstance(queue, str):
                return _bad(queue)
            stream = event_stream(queue, HEARTBEAT_S, lambda: agent.executor_disconnected(call, queue))
            return StreamingResponse(stream, media_type="application/json")
        if call.get("type") == "UPDATE":
            error = agent.executor_update(call)
            return _bad(error) if error else Response(status_code=202)
        if call.get("type") == "MESSAGE":
            return Response(status_code=202)
        return _bad(f"unsupported executor call {call.get('type')}")

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "agent_id": agent.agent_id, "registered": agent.registered.is_set()}

    @app.get("/spindle/v1/containers/{name}/logs")
    def container_logs(name: str, request: Request, tail: int | None = None, since: float | None = None,
                       follow: bool = False) -> Response:
        """A Spindle container's logs on this node, for the api-server (the internal token)."""
        if not agent.token or not protocol.authorized(agent.token, request.headers.get("authorization")):
            return _bad("container logs are for the platform (the internal token)", 401)
        problem = container_logs_module.check_request(name, tail, since)
        if problem:
            return _bad(problem)
        lines = container_logs_module.open_logs(docker_client(), name, tail, since, follow)
        try:
            first = next(lines, b"")
        except container_logs_module.NoSuchContainer:
            return _bad(f"no Spindle container {name} on this node", 404)
        return StreamingResponse(itertools.chain([first], lines), media_type="text/plain; charset=utf-8")

    @app.post("/spindle/v1/containers/{name}/exec")
    async def container_exec(name: str, request: Request) -> Response:
        """Run a command in a Spindle container on this node, for the api-server (the internal token):
        ``{"argv": [...], "user": "uid[:gid]" (optional), "timeout_s": 300}``; its output as NDJSON."""
        parsed = await _platform_request(request, "container execs", lambda body: container_exec_module
                                         .parse_request(name, body))
        if isinstance(parsed, Response):
            return parsed
        try:  # Docker's calls block: in a worker thread, as the lines are read later
            lines = await run_in_threadpool(lambda: container_exec_module.start_exec(docker_client(), name, parsed))
        except REFUSALS as exc:
            return _refused(name, exc)
        return StreamingResponse(lines, media_type="application/x-ndjson")

    @app.put("/spindle/v1/containers/{name}/files")
    async def container_files(name: str, request: Request) -> Response:
        """Replace config files in a running Spindle container on this node and run its reload, for
        the orchestrator (the internal token): ``{"files": {path: text}, "reload": {"argv": [...]}}``."""
        parsed = await _platform_request(request, "container files", lambda body: container_files_module
                                         .parse_request(name, body))
        if isinstance(parsed, Response):
            return parsed

        def replace() -> dict:
            client = docker_client()
            try:
                done: dict = {"files": container_files_module.put_files(client, name, parsed.files)}
            finally:
                client.close()
            if parsed.reload is not None:
                done.update(container_files_module.run_reload(docker_client(), name, parsed.reload))
            return done

        try:  # Docker's calls block: in a worker thread
            done = await run_in_threadpool(replace)
        except container_files_module.CannotWrite as exc:
            return _bad(str(exc)[:1000], 409)
        except REFUSALS as exc:
            return _refused(name, exc)
        return Response(json.dumps(done), media_type="application/json")

    @app.websocket("/spindle/v1/containers/{name}/terminal")
    async def container_terminal(websocket: WebSocket, name: str) -> None:
        """An interactive shell in a Spindle container on this node, for the api-server (the internal
        token, checked before the WebSocket is accepted; refusals are plain HTTP answers)."""
        if not agent.token or not protocol.authorized(agent.token, websocket.headers.get("authorization")):
            await deny(websocket, _bad("container terminals are for the platform (the internal token)", 401))
            return
        if not container_logs_module.NAME.match(name):
            await deny(websocket, _bad(f"{name!r} is not a Spindle container name"))
            return
        try:  # Docker's calls block: in a worker thread
            terminal = await run_in_threadpool(
                lambda: container_terminal_module.open_terminal(docker_client(), name))
        except REFUSALS as exc:
            await deny(websocket, _refused(name, exc))
            return
        await container_terminal_module.serve(websocket, terminal)

    return app
