"""HTTP endpoints: /api/v1/scheduler, /api/v1/executor (RecordIO event streams + calls) and the
operator API at /api/v1."""
import asyncio
import contextlib
import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from spindle_mesos_embedded.master import HEARTBEAT_S, Master
from spindle_mesos_embedded.recordio import record

ALLOCATION_INTERVAL_S = 1.0


async def _events(queue: asyncio.Queue, on_close) -> Any:
    """The RecordIO stream of one subscriber; heartbeats while idle; ends on ``None``."""
    try:
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
            except TimeoutError:
                event = {"type": "HEARTBEAT"}
            if event is None:
                return
            yield record(event)
    finally:
        on_close()


def _bad(message: str) -> Response:
    return Response(message, status_code=400, media_type="text/plain")


def build_app(master: Master) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        async def allocator():
            while True:
                master.make_offers()
                master.resend_unacknowledged()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(master.allocate_now.wait(), ALLOCATION_INTERVAL_S)
                master.allocate_now.clear()

        task = asyncio.get_running_loop().create_task(allocator())
        yield
        task.cancel()
        master.shutdown()

    app = FastAPI(title="Spindle embedded Mesos master", lifespan=lifespan)

    @app.post("/api/v1/scheduler")
    async def scheduler(request: Request) -> Response:
        try:
            call = json.loads(await request.body())
        except ValueError:
            return _bad("body is not JSON")
        if call.get("type") == "SUBSCRIBE":
            if "subscribe" not in call or "framework_info" not in call["subscribe"]:
                return _bad("SUBSCRIBE needs subscribe.framework_info")
            framework = master.subscribe(call)
            return StreamingResponse(_events(framework.events, lambda: master.disconnected(framework)),
                                     media_type="application/json", headers={"Mesos-Stream-Id": framework.stream_id})
        caller = master.frameworks.get((call.get("framework_id") or {}).get("value", ""))
        if caller is None or request.headers.get("mesos-stream-id") != caller.stream_id:
            return _bad("unknown framework or wrong Mesos-Stream-Id")
        error = master.handle_call(call)
        return _bad(error) if error else Response(status_code=202)

    @app.post("/api/v1/executor")
    async def executor(request: Request) -> Response:
        call = json.loads(await request.body())
        if call.get("type") == "SUBSCRIBE":
            result = master.executor_subscribed(call)
            if isinstance(result, str):
                return _bad(result)
            executor_, queue = result
            return StreamingResponse(_events(queue, lambda: None), media_type="application/json")
        if call.get("type") == "UPDATE":
            error = master.executor_update(call)
            return _bad(error) if error else Response(status_code=202)
        if call.get("type") == "MESSAGE":
            return Response(status_code=202)
        return _bad(f"unsupported executor call {call.get('type')}")

    @app.post("/api/v1")
    async def operator(request: Request) -> Response:
        call = json.loads(await request.body())
        kind = call.get("type", "")
        state = master.state()
        answers = {"GET_STATE": state, "GET_TASKS": state["get_tasks"], "GET_AGENTS": state["get_agents"],
                   "GET_FRAMEWORKS": state["get_frameworks"], "GET_HEALTH": {"healthy": True}}
        if kind not in answers:
            return _bad(f"unsupported operator call {kind}")
        return JSONResponse({"type": kind, kind.lower(): answers[kind]})

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    return app
