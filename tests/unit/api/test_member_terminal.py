"""The member terminal's WebSocket on the api-server.

Its refusals, through the real app, before anything is accepted and in the error envelope: another
site's page (403), no token, an unknown, revoked or expired one (401, as every route's), a token in
the URL (ignored: 401), another user's cluster (404), a path no cluster can have (422), no
``spindle.terminal`` subprotocol (400), the stream cap (429), an orchestrator that does not answer
(503). The database is SQLite with the api-server's tables, its tokens made as the platform makes
them.

Its relay, against the real agent app served by uvicorn on a free port (Docker faked, as in
tests/unit/mesos/test_container_terminal.py): frames both ways, the agent's end (exit code, timed out)
or the caller's leaving (CLOSED, the shell killed) as the record will say, and the node's refusals as
the public API's (NO_CONTAINER, NODE_ERROR, NODE_UNREACHABLE). And a terminal session's record as
``GET …/execs`` shows it."""
import asyncio
import json
import socket
import threading
import time
from datetime import timedelta

import pytest
import uvicorn
from docker.errors import APIError
from fastapi import FastAPI, WebSocket
from fastapi.testclient import TestClient
from sqlalchemy import event
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from spindle_api import member_execs
from spindle_api.api.routes.member_exec import exec_record
from spindle_api.api.routes.member_terminal import check_params, connect_agent, offered_token, origin_allowed, relay
from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_api.models import Base, User
from spindle_api.streams import StreamLimiter
from spindle_api.tokens import new_token, utc_now
from spindle_common.contracts import MemberView
from spindle_common.db import get_engine, session_factory
from spindle_common.errors import ApiError
from spindle_mesos_embedded import container_terminal
from spindle_mesos_embedded.agent_app import build_agent_app
from tests.support.fake_docker import Shell, docker_for, dockerd_answer

# --- pure parts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("origin", "host", "allowed"), [
    (None, "127.0.0.1:8080", True),  # not a browser
    ("http://127.0.0.1:8080", "127.0.0.1:8080", True),
    ("http://LOCALHOST:5173", "localhost:5173", True),
    ("http://spindle.example", "spindle.example:80", True),
    ("https://spindle.example", "spindle.example", True),
    ("https://spindle.example:443", "spindle.example", True),
    ("http://[::1]:8080", "[::1]:8080", True),
    ("http://127.0.0.1:8081", "127.0.0.1:8080", False),
    ("http://evil.example", "127.0.0.1:8080", False),
    ("http://127.0.0.1.evil.example:8080", "127.0.0.1:8080", False),
    ("https://spindle.example", "spindle.example:80", False),
    ("null", "127.0.0.1:8080", False),  # a sandboxed frame, a file
    ("file:///tmp/x.html", "127.0.0.1:8080", False),
    ("http://127.0.0.1:x", "127.0.0.1:8080", False),
    ("http://127.0.0.1:8080", None, False),
    ("", "127.0.0.1:8080", False),
])
def test_origin(origin, host, allowed):
    assert origin_allowed(origin, host) is allowed


@pytest.mark.parametrize(("offered", "token"), [
    (["spindle.terminal", "bearer.spd_abc-_123"], "spd_abc-_123"),
    (["bearer.spd_x"], "spd_x"),
    (["spindle.terminal"], None),
    ([], None),
    (["spindle.terminal", "bearer."], None),
    (["bearer.a", "bearer.b"], None),
    (["Bearer.spd_x"], None),
])
def test_offered_token(offered, token):
    if token is None:
        with pytest.raises(ApiError) as refused:
            offered_token(offered)
        assert refused.value.status == 401 and "bearer.<token>" in refused.value.message
    else:
        assert offered_token(offered) == token


def test_path_values_have_the_rest_routes_shapes():
    good = {"username": "ann", "product": "static-web", "version": "1.0", "cluster_id": "c0123456789",
            "member": "server-1"}
    check_params(good)
    with pytest.raises(ApiError) as refused:
        check_params({**good, "username": "A", "member": "-x"})
    assert refused.value.status == 422 and refused.value.code == "VALIDATION_FAILED"
    assert [e["field"] for e in refused.value.details["errors"]] == ["path.username", "path.member"]


# --- refusals through the app -------------------------------------------------------------------

PATH = "/clusters/ann/static-web/1.0/c0123456789/members/server-1/terminal"


@pytest.fixture
def database(tmp_path) -> str:
    """An SQLite database with the api-server's tables (its schema ``api`` attached)."""
    url = f"sqlite:///{tmp_path}/main.db"
    engine = get_engine(url)

    @event.listens_for(engine, "connect")
    def attach(connection, _):
        connection.execute(f"ATTACH DATABASE '{tmp_path}/api.db' AS api")

    Base.metadata.create_all(engine)
    yield url
    engine.dispose()
    get_engine.cache_clear()


@pytest.fixture
def tokens(database) -> dict[str, str]:
    """Tokens of ann: a good one, a revoked one, an expired one; and bob's."""
    with session_factory(database)() as session:
        ann, bob = User(username="ann"), User(username="bob")
        session.add_all([ann, bob])
        session.flush()
        good, _ = new_token(session, ann)
        revoked, row = new_token(session, ann)
        row.revoked_at = utc_now()
        expired, _ = new_token(session, ann, lifetime=timedelta(seconds=-1))
        other, _ = new_token(session, bob)
        session.commit()
    return {"good": good, "revoked": revoked, "expired": expired, "bob": other}


@pytest.fixture
def api(database) -> TestClient:
    settings = Settings(database_url=database, consul_url="http://127.0.0.1:1", orchestrator_url="http://127.0.0.1:1",
                        disk_service_url="http://127.0.0.1:1")
    return TestClient(build_app(settings))


def refusal(api: TestClient, path: str = PATH, protocols: list[str] | None = None,
            headers: dict | None = None) -> WebSocketDenialResponse:
    with pytest.raises(WebSocketDenialResponse) as refused, \
            api.websocket_connect(path, subprotocols=protocols, headers=headers or {}):
        pass
    return refused.value


def offer(token: str) -> list[str]:
    return ["spindle.terminal", f"bearer.{token}"]


@pytest.mark.parametrize(("case", "status", "code"), [
    ("another site's page", 403, "ORIGIN_NOT_ALLOWED"),
    ("no token", 401, "UNAUTHENTICATED"),
    ("an unknown token", 401, "UNAUTHENTICATED"),
    ("a revoked token", 401, "TOKEN_REVOKED"),
    ("an expired token", 401, "TOKEN_EXPIRED"),
    ("the token in the URL", 401, "UNAUTHENTICATED"),
    ("another user's cluster", 404, "CLUSTER_NOT_FOUND"),
    ("a path no cluster has", 422, "VALIDATION_FAILED"),
    ("no terminal subprotocol", 400, "SUBPROTOCOL_REQUIRED"),
    ("the orchestrator does not answer", 503, "SERVICE_UNAVAILABLE"),
])
def test_refusals_before_accepting(api, tokens, case, status, code):
    path, protocols, headers = PATH, offer(tokens["good"]), {"origin": "http://testserver"}
    if case == "another site's page":
        headers = {"origin": "http://evil.example"}
    elif case == "no token":
        protocols = ["spindle.terminal"]
    elif case == "an unknown token":
        protocols = offer("spd_" + "x" * 43)
    elif case == "a revoked token":
        protocols = offer(tokens["revoked"])
    elif case == "an expired token":
        protocols = offer(tokens["expired"])
    elif case == "the token in the URL":
        path, protocols = f"{PATH}?token={tokens['good']}&access_token={tokens['good']}", ["spindle.terminal"]
    elif case == "another user's cluster":
        protocols = offer(tokens["bob"])  # bob asks for ann's
    elif case == "a path no cluster has":
        path = PATH.replace("c0123456789", "C..")
    elif case == "no terminal subprotocol":
        protocols = [f"bearer.{tokens['good']}"]
    answer = refusal(api, path, protocols, headers)
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code and error["message"] and isinstance(error["details"], dict)
    assert tokens["good"] not in answer.text


def test_a_user_at_the_stream_cap_is_refused(api, tokens):
    api.app.state.streams = StreamLimiter(0)  # type: ignore[attr-defined]
    answer = refusal(api, protocols=offer(tokens["good"]))
    assert answer.status_code == 429 and answer.json()["error"]["code"] == "TOO_MANY_STREAMS"
    assert answer.headers["retry-after"] == "5"


def test_a_refused_session_keeps_no_place_under_the_cap(api, tokens):
    limiter = StreamLimiter(1)
    api.app.state.streams = limiter  # type: ignore[attr-defined]
    for _ in range(3):  # the orchestrator does not answer: each refusal gives its place back
        assert refusal(api, protocols=offer(tokens["good"])).status_code == 503
    assert limiter.open == {}


def test_a_database_that_fails_is_a_503_not_a_crash(tmp_path):
    settings = Settings(database_url=f"sqlite:///{tmp_path}/no-such-folder/api.db", consul_url="http://127.0.0.1:1")
    answer = refusal(TestClient(build_app(settings)), protocols=offer("spd_" + "x" * 43))
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "UNAVAILABLE"
    get_engine.cache_clear()


# --- the record -----------------------------------------------------------------------------------

def test_a_terminal_session_is_recorded_as_one(database):
    with session_factory(database)() as session:
        record_id = member_execs.record_start(session, "ann", "c0123456789", "ann", "c0123456789-server-1",
                                              member_execs.TERMINAL_ARGV, kind="terminal")
        command_id = member_execs.record_start(session, "ann", "c0123456789", "ann", "c0123456789-server-1", ["id"])
    asyncio.run(member_execs.finish(database, record_id, 137, timed_out=True))
    with session_factory(database)() as session:
        records = [exec_record(row) for row in member_execs.recorded_execs(session, 10, cluster_id="c0123456789")]
    assert [(r.id, r.kind, r.command) for r in records] == [(command_id, "exec", ["id"]),
                                                           (record_id, "terminal", ["<terminal>"])]
    assert records[1].exit_code == 137 and records[1].timed_out and records[1].finished_at is not None
    assert records[0].finished_at is None


# --- the relay, against a real agent app ----------------------------------------------------------

MEMBER = MemberView.model_validate({"member_id": "c0123456789-server-1", "role": "server", "state": "TASK_RUNNING",
                                    "node": "node-1"})
INTERNAL = "agent-internal-token"


class FakeAgent:
    token = INTERNAL


class Served:
    """An ASGI app served by uvicorn on a free port of 127.0.0.1, in a thread."""

    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.server.started
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def shell():
    found = Shell()
    yield found
    found.stop()


@pytest.fixture
def node(shell):
    """The member's node's agent, its Docker faked: (its URL, the fake)."""
    docker = docker_for(shell)
    served = Served(build_agent_app(FakeAgent(), docker_client=lambda: docker))  # type: ignore[arg-type]
    yield served.url, docker
    served.stop()


def caller_app(agent_url: str, token: str, outcomes: list, records: list | None = None):
    """What the api-server's route does once the caller may: the agent's WebSocket, then the relay
    (what it records of the session's end into ``records``)."""
    app = FastAPI()

    async def record(*ended) -> None:
        (records if records is not None else []).append(ended)

    @app.websocket("/terminal")
    async def terminal(websocket: WebSocket) -> None:
        try:
            agent = await connect_agent(agent_url, MEMBER, token)
        except ApiError as refused:
            outcomes.append(refused)
            await websocket.close()
            return
        await websocket.accept(subprotocol="spindle.terminal")
        try:
            outcomes.append(await relay(websocket, agent, MEMBER, record))
        finally:
            await agent.close()

    return TestClient(app)


def wait_for(outcomes: list) -> object:
    deadline = time.monotonic() + 10
    while not outcomes and time.monotonic() < deadline:
        time.sleep(0.02)
    return outcomes[0]


def test_frames_both_ways_until_the_shell_exits(node, shell):
    url, docker = node
    outcomes: list = []
    records: list = []
    with caller_app(url, INTERNAL, outcomes, records).websocket_connect("/terminal") as ws:
        ws.send_bytes(b"id -u\r")
        assert shell.read(6) == b"id -u\r"
        shell.tty.sendall(b"65534\r\n")
        assert ws.receive_bytes() == b"65534\r\n"
        ws.send_text(json.dumps({"resize": [100, 30]}))
        ws.send_text(json.dumps({"resize": [100, 1001]}))
        assert json.loads(ws.receive_text())["error"]["code"] == "BAD_CONTROL"  # the agent's, passed on
        assert docker.api.resized == [("e1", 100, 30)]
        shell.end(code=2)
        assert json.loads(ws.receive_text()) == {"exit_code": 2, "reason": "exited"}
        # recorded before the caller got the end: who lists the member's execs now finds it ended
        assert records == [(2, False, None)]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_bytes()
        assert closed.value.code == 1000
        assert wait_for(outcomes) == (2, False, None)


def test_the_caller_leaving_closes_the_agents_side_and_kills_the_shell(node, shell):
    url, docker = node
    outcomes: list = []
    with caller_app(url, INTERNAL, outcomes).websocket_connect("/terminal") as ws:
        ws.send_bytes(b"x")
        assert shell.read(1) == b"x"
        ws.close()  # (leaving the block would also cancel the app at once: wait for it here)
        assert wait_for(outcomes) == (None, False, "CLOSED")
    deadline = time.monotonic() + 10
    while shell.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shell.process.poll() == -9


def test_an_idle_session_ends_as_timed_out(node, shell, monkeypatch):
    monkeypatch.setattr(container_terminal, "IDLE_S", 0.3)
    url, _ = node
    outcomes: list = []
    with caller_app(url, INTERNAL, outcomes).websocket_connect("/terminal") as ws:
        assert json.loads(ws.receive_text()) == {"exit_code": 137, "reason": "idle"}
        with pytest.raises(WebSocketDisconnect):
            ws.receive_bytes()
        assert wait_for(outcomes) == (137, True, None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(("case", "status", "code"), [
    ("a wrong internal token", 502, "NODE_ERROR"),
    ("no such container", 404, "NO_CONTAINER"),
    ("a container not running", 404, "NO_CONTAINER"),
    ("a node that does not answer", 503, "NODE_UNREACHABLE"),
])
def test_the_nodes_refusals_as_the_public_apis(node, shell, case, status, code):
    url, docker = node
    token = INTERNAL
    if case == "a wrong internal token":
        token = "wrong"
    elif case == "no such container":
        docker.container = None
    elif case == "a container not running":
        docker.api.create_error = APIError("not running", response=dockerd_answer(409))
    elif case == "a node that does not answer":
        url = f"http://127.0.0.1:{free_port()}"
    outcomes: list = []
    with pytest.raises(WebSocketDisconnect), caller_app(url, token, outcomes).websocket_connect("/terminal"):
        pass
    refused = wait_for(outcomes)
    assert isinstance(refused, ApiError) and (refused.status, refused.code) == (status, code), refused
    assert refused.details == {"node": "node-1"}


def test_a_real_client_reads_the_refusals_of_the_served_app(database, tokens):
    """Through uvicorn (its websockets protocol, the denial extension) to the websockets client, as
    the platform test and the CLI's library see them: an HTTP answer with the envelope, no upgrade."""
    settings = Settings(database_url=database, consul_url="http://127.0.0.1:1", orchestrator_url="http://127.0.0.1:1")
    served = Served(build_app(settings))
    try:
        url = served.url.replace("http://", "ws://") + PATH
        for protocols, headers, status, code in [
            (["spindle.terminal"], None, 401, "UNAUTHENTICATED"),
            (offer(tokens["good"]), {"Origin": "http://evil.example"}, 403, "ORIGIN_NOT_ALLOWED"),
            (offer(tokens["bob"]), {"Origin": served.url}, 404, "CLUSTER_NOT_FOUND"),
        ]:
            with pytest.raises(InvalidStatus) as refused:
                connect(url, subprotocols=protocols, additional_headers=headers, open_timeout=10)  # type: ignore[arg-type]
            answer = refused.value.response
            assert answer.status_code == status
            assert json.loads(answer.body or b"")["error"]["code"] == code
            assert tokens["good"].encode() not in (answer.body or b"")
    finally:
        served.stop()
