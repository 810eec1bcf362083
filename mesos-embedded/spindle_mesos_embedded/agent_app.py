"""The agent's HTTP endpoints: the v1 executor API at /api/v1/executor (as a Mesos agent serves it
with ``--authenticate_http_executors``: each call carries ``Authorization: Bearer <the token the
agent gave that executor>``, else 401) and /health."""
import contextlib
import json

from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from spindle_mesos_embedded.agent import Agent
from spindle_mesos_embedded.master import HEARTBEAT_S
from spindle_mesos_embedded.recordio import event_stream


def _bad(message: str, status_code: int = 400) -> Response:
    return Response(message, status_code=status_code, media_type="text/plain")


def build_agent_app(agent: Agent) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        await agent.start()
        yield
        await agent.stop()

    app = FastAPI(title="Spindle embedded Mesos agent", lifespan=lifespan)

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

    return app
