"""The master's HTTP endpoints: /api/v1/scheduler (RecordIO event streams + calls), the operator API
at /api/v1, and the agents' ``protocol.PATH``. (The executor API is the agents', ``agent_app.py``.)

With credentials (``SPINDLE_MESOS_CREDENTIALS``: a file shaped like Mesos' ``--credentials``), the
master authenticates as a real one does with ``--authenticate_http_frameworks`` and
``--authenticate_http_readonly``/``readwrite`` (HTTP Basic, the ``basic`` authenticator): scheduler
and operator calls without a known principal and its secret are 401; a framework's
``FrameworkInfo.principal`` must be the principal it authenticated as (403 otherwise), and every
later call of a framework, or a failover SUBSCRIBE under its id, must come from that principal."""
import asyncio
import base64
import binascii
import contextlib
import hmac
import json
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from spindle_common.metrics import DEV_METRICS_TOKEN, install_metrics
from spindle_mesos_embedded import protocol
from spindle_mesos_embedded.master import HEARTBEAT_S, Master
from spindle_mesos_embedded.metrics import MasterMetrics
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


def _unauthenticated() -> Response:
    return Response("this master requires HTTP Basic authentication with a known principal", status_code=401,
                    media_type="text/plain", headers={"WWW-Authenticate": 'Basic realm="mesos"'})


def load_credentials(path: str) -> dict[str, str]:
    """``{"credentials": [{"principal": …, "secret": …}]}`` (Mesos' JSON credentials file) as a map."""
    with open(path) as f:
        entries = json.load(f)["credentials"]
    credentials = {str(e["principal"]): str(e["secret"]) for e in entries}
    if not credentials or any(not p or not s for p, s in credentials.items()):
        raise ValueError(f"{path}: every credential needs a principal and a secret")
    return credentials


def authenticated_principal(credentials: dict[str, str], header: str | None) -> str | None:
    """The principal an ``Authorization: Basic`` header proves, or None."""
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        principal, _, secret = base64.b64decode(encoded.strip(), validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    known = credentials.get(principal)
    return principal if known is not None and hmac.compare_digest(known.encode(), secret.encode()) else None


def build_app(master: Master, token: str = "", credentials: dict[str, str] | None = None,
              metrics_token: str = DEV_METRICS_TOKEN) -> FastAPI:
    """``token``: the internal token agents must present (none: any agent may register).
    ``credentials``: principal → secret; frameworks and operator calls must authenticate with one
    (none: no authentication, as a Mesos master without ``--authenticate_http_frameworks``).
    ``metrics_token``: what the scraper presents for ``GET /metrics`` (the master's figures)."""

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
        principal = authenticated_principal(credentials, request.headers.get("authorization")) if credentials else None
        if credentials and principal is None:
            return _unauthenticated()
        call = await _json(request)
        if call is None:
            return _bad("body is not JSON")
        if call.get("type") == "SUBSCRIBE":
            if "subscribe" not in call or not isinstance(call["subscribe"].get("framework_info"), dict):
                return _bad("SUBSCRIBE needs subscribe.framework_info")
            if credentials:
                info = call["subscribe"]["framework_info"]
                claimed = (call.get("framework_id") or info.get("id") or {}).get("value", "")
                owner = master.frameworks.get(claimed)
                if info.get("principal") != principal:
                    return _bad(f"FrameworkInfo.principal {info.get('principal')!r} is not the authenticated "
                                f"principal {principal!r}", 403)
                if owner is not None and owner.info.get("principal") != principal:
                    return _bad(f"framework {claimed} belongs to another principal", 403)
            framework = master.subscribe(call)
            stream = event_stream(framework.events, HEARTBEAT_S, lambda: master.disconnected(framework))
            return StreamingResponse(stream, media_type="application/json",
                                     headers={protocol.STREAM_HEADER: framework.stream_id})
        caller = master.frameworks.get((call.get("framework_id") or {}).get("value", ""))
        if caller is None or request.headers.get(protocol.STREAM_HEADER) != caller.stream_id:
            return _bad("unknown framework or wrong Mesos-Stream-Id")
        if credentials and caller.info.get("principal") != principal:
            return _bad(f"framework {caller.framework_id} belongs to another principal", 403)
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
        if credentials and authenticated_principal(credentials, request.headers.get("authorization")) is None:
            return _unauthenticated()
        call = await _json(request)
        kind = (call or {}).get("type", "")
        state = master.state()
        answers = {"GET_STATE": state, "GET_TASKS": state["get_tasks"], "GET_AGENTS": state["get_agents"],
                   "GET_FRAMEWORKS": state["get_frameworks"], "GET_EXECUTORS": state["get_executors"],
                   "GET_HEALTH": {"healthy": True}}
        if kind not in answers:  # (TEARDOWN and the other writes are not served: nobody can use them)
            return _bad(f"unsupported operator call {kind}")
        return JSONResponse({"type": kind, kind.lower(): answers[kind]})

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok"}

    install_metrics(app, "mesos-master", metrics_token, [MasterMetrics(master)])
    return app
