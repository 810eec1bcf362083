"""The master's HTTP endpoints: /api/v1/scheduler (RecordIO event streams + calls), the operator API
at /api/v1, and the agents' ``protocol.PATH``. (The executor API is the agents', ``agent_app.py``.)"""
import asyncio
import contextlib
import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from spindle_mesos_embedded import protocol
from spindle_mesos_embedded.master import HEARTBEAT_S, Master
from spindle_mesos_embedded.recordio import event_stream

ALLOCATION_INTERVAL_S = 1.0


def _bad(message: str, status_code: int = 400) -> Response:
    return Response(message, status_code=status_code, media_type="text/plain")


async def _json(request: Request) -> dict[str, Any] | None:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def build_app(master: Master, token: str = "") -> FastAPI:
    """``token``: the internal token agents must present (none: any agent may register)."""

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        async def allocator():
            while True:
                master.tick()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(master.allocate_now.wait(), ALLOCATION_INTERVAL_S)
                master.allocate_now.clear()

        task = asyncio.get_running_loop().create_task(allocator())
        yield
        task.cancel()

    app = FastAPI(title="Spindle embedded Mesos master", lifespan=lifespan)

    @app.post("/api/v1/scheduler")
    async def scheduler(request: Request) -> Response:
        call = await _json(request)
        if call is None:
            return _bad("body is not JSON")
        if call.get("type") == "SUBSCRIBE":
            if "subscribe" not in call or "framework_info" not in call["subscribe"]:
                return _bad("SUBSCRIBE needs subscribe.framework_info")
            framework = master.subscribe(call)
            stream = event_stream(framework.events, HEARTBEAT_S, lambda: master.disconnected(framework))
            return StreamingResponse(stream, media_type="application/json",
                                     headers={protocol.STREAM_HEADER: framework.stream_id})
        caller = master.frameworks.get((call.get("framework_id") or {}).get("value", ""))
        if caller is None or request.headers.get(protocol.STREAM_HEADER) != caller.stream_id:
            return _bad("unknown framework or wrong Mesos-Stream-Id")
        error = master.handle_call(call)
        return _bad(error) if error else Response(status_code=202)

    @app.post(protocol.PATH)
    async def agent(request: Request) -> Response:
        if not protocol.authorized(token, request.headers.get("authorization")):
            return _bad("agent calls need the internal token", 401)
        call = await _json(request)
        if call is None:
            return _bad("body is not JSON")
        if call.get("type") == "SUBSCRIBE":
            subscribed = master.agent_subscribe(call)
            if isinstance(subscribed, str):
                return _bad(subscribed)
            stream_id, queue = subscribed.stream_id, subscribed.events
            assert queue is not None
            stream = event_stream(queue, master.agent_heartbeat_s,
                                  lambda: master.agent_disconnected(subscribed, stream_id))
            return StreamingResponse(stream, media_type="application/json", headers={protocol.STREAM_HEADER: stream_id})
        status, error = master.agent_call(call, request.headers.get(protocol.STREAM_HEADER))
        return _bad(error, status) if error else Response(status_code=status)

    @app.post("/api/v1")
    async def operator(request: Request) -> Response:
        call = await _json(request)
        kind = (call or {}).get("type", "")
        state = master.state()
        answers = {"GET_STATE": state, "GET_TASKS": state["get_tasks"], "GET_AGENTS": state["get_agents"],
                   "GET_FRAMEWORKS": state["get_frameworks"], "GET_EXECUTORS": state["get_executors"],
                   "GET_HEALTH": {"healthy": True}}
        if kind not in answers:
            return _bad(f"unsupported operator call {kind}")
        return JSONResponse({"type": kind, kind.lower(): answers[kind]})

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    return app
