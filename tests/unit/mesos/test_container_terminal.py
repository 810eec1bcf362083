"""The agent's member terminal (a WebSocket): callers without the internal token and bad names are
refused before Docker is asked, containers that are not Spindle's or not running are refused before
the WebSocket is accepted, and an accepted session bridges the caller and the exec's tty (input,
output, resize, a bad control message answered and ignored) until either side ends, then kills what
the shell left running and tells the caller how it ended (exit code, why): the shell exiting, the
caller closing, no input for the idle time, the longest session.

Docker is faked (as in test_container_exec; tests/support/fake_docker.py): its exec is a real
socket pair, whose other end plays the shell, and the exec's process is a real process of this host,
killed the way a member's is."""
import asyncio
import json
import socket
import threading
import time

import pytest
from docker.errors import APIError
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse
from starlette.websockets import WebSocket, WebSocketDisconnect

from spindle_mesos_embedded import container_terminal
from spindle_mesos_embedded.agent_app import build_agent_app
from tests.support.fake_docker import FakeDocker, FakeTerminalApi, Shell, docker_for, dockerd_answer

NAME = "spindle-c0123456789-server-1"
URL = f"/spindle/v1/containers/{NAME}/terminal"
TOKEN = {"Authorization": "Bearer agent-internal-token"}


class FakeAgent:
    """Only what the route reads of an agent: its internal token."""

    token = "agent-internal-token"


def docker_never():
    raise AssertionError("Docker must not be asked")


def refusal(client: TestClient, url: str, headers: dict) -> WebSocketDenialResponse:
    with pytest.raises(WebSocketDenialResponse) as refused, client.websocket_connect(url, headers=headers):
        pass
    return refused.value


@pytest.mark.parametrize(("headers", "url", "status"), [
    ({}, URL, 401),
    ({"Authorization": "Bearer wrong"}, URL, 401),
    ({"Authorization": "agent-internal-token"}, URL, 401),
    (TOKEN, "/spindle/v1/containers/postgres/terminal", 400),
    (TOKEN, "/spindle/v1/containers/spindle-UPPER/terminal", 400),
])
def test_refused_before_docker(headers, url, status):
    client = TestClient(build_agent_app(FakeAgent(), docker_client=docker_never))  # type: ignore[arg-type]
    answer = refusal(client, url, headers)
    assert answer.status_code == status, answer.text
    assert answer.text


@pytest.fixture
def shell():
    found = Shell()
    yield found
    found.stop()


@pytest.mark.parametrize(("labels", "create_error", "status"), [
    ({}, None, 404),
    ({"io.spindle.owned": "false"}, None, 404),
    (None, APIError("is not running", response=dockerd_answer(409)), 409),
    (None, APIError("daemon broke", response=dockerd_answer(500)), 502),
])
def test_what_is_not_a_running_spindle_container_is_refused_before_accepting(shell, labels, create_error, status):
    docker = docker_for(shell, labels, create_error)
    client = TestClient(build_agent_app(FakeAgent(), docker_client=lambda: docker))  # type: ignore[arg-type]
    assert refusal(client, URL, TOKEN).status_code == status
    assert docker.closed


def test_no_container_is_404(shell):
    docker = FakeDocker(None, FakeTerminalApi(shell))
    client = TestClient(build_agent_app(FakeAgent(), docker_client=lambda: docker))  # type: ignore[arg-type]
    assert refusal(client, URL, TOKEN).status_code == 404


def app_for(docker: FakeDocker) -> TestClient:
    return TestClient(build_agent_app(FakeAgent(), docker_client=lambda: docker))  # type: ignore[arg-type]


def end_of(ws) -> dict:
    """The end frame, then the close."""
    end = json.loads(ws.receive_text())
    with pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_bytes()
    assert closed.value.code == 1000
    return end


def test_a_session_bridges_input_output_and_resize_until_the_shell_exits(shell):
    docker = docker_for(shell)
    with app_for(docker).websocket_connect(URL, headers=TOKEN) as ws:
        [(container_id, cmd, options)] = docker.api.created
        assert container_id == shell.cgroup and cmd == list(container_terminal.SHELL)
        assert options == {"stdout": True, "stderr": True, "stdin": True, "tty": True, "privileged": False,
                           "user": "", "environment": {"TERM": "xterm-256color"}}
        ws.send_bytes(b"id -u\r")
        assert shell.read(6) == b"id -u\r"
        ws.send_text("é\x03")  # a text frame that is no control message is input too (UTF-8)
        assert shell.read(3) == "é\x03".encode()
        shell.tty.sendall(b"65534\r\n$ ")
        assert ws.receive_bytes() == b"65534\r\n$ "
        ws.send_text(json.dumps({"resize": [132, 43]}))
        ws.send_text(json.dumps({"resize": [0, 43]}))  # refused, and nothing changes
        assert json.loads(ws.receive_text())["error"]["code"] == "BAD_CONTROL"
        ws.send_text('{"resize": [80, 24], "x": 1}')
        assert "alone" in json.loads(ws.receive_text())["error"]["message"]
        assert docker.api.resized == [("e1", 132, 43)]
        shell.end(code=3)
        assert end_of(ws) == {"exit_code": 3, "reason": "exited"}
    assert docker.closed


def test_the_caller_leaving_kills_the_shell(shell):
    docker = docker_for(shell)
    with app_for(docker).websocket_connect(URL, headers=TOKEN) as ws:
        ws.send_bytes(b"sleep 1000\r")
        assert shell.read(11) == b"sleep 1000\r"
    deadline = time.monotonic() + 10
    while shell.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shell.process.poll() == -9, "the shell's process is killed when the caller goes"
    deadline = time.monotonic() + 10
    while not docker.closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert docker.closed


@pytest.mark.parametrize(("limit", "reason"), [("IDLE_S", "idle"), ("MAX_SESSION_S", "max_duration")])
def test_a_session_ends_at_its_time_limits(shell, monkeypatch, limit, reason):
    monkeypatch.setattr(container_terminal, limit, 0.5)
    docker = docker_for(shell)
    started = time.monotonic()
    with app_for(docker).websocket_connect(URL, headers=TOKEN) as ws:
        if reason == "max_duration":  # input keeps an idle session going, not a long one
            ws.send_bytes(b"x")
        assert end_of(ws) == {"exit_code": 137, "reason": reason}
    assert time.monotonic() - started < 8
    assert shell.process.poll() == -9


def test_input_keeps_a_session_from_idling(shell, monkeypatch):
    monkeypatch.setattr(container_terminal, "IDLE_S", 0.6)
    docker = docker_for(shell)
    with app_for(docker).websocket_connect(URL, headers=TOKEN) as ws:
        for _ in range(6):
            time.sleep(0.2)
            ws.send_bytes(b".")
        assert shell.read(6) == b"......"
        assert shell.process.poll() is None, "1.2 s of typing with an idle limit of 0.6 s"
        assert end_of(ws)["reason"] == "idle"


def test_output_stops_when_the_tty_breaks(shell):
    """The exec's connection dropped (dockerd restarted): the session ends as the shell's would."""
    docker = docker_for(shell)
    ended = threading.Event()
    with app_for(docker).websocket_connect(URL, headers=TOKEN) as ws:
        shell.tty.shutdown(socket.SHUT_RDWR)
        end = end_of(ws)
        ended.set()
    assert end["reason"] == "exited" and ended.is_set()


def test_a_caller_gone_before_the_accept_still_ends_the_shell(shell):
    docker = docker_for(shell)
    terminal = container_terminal.open_terminal(docker, NAME)  # type: ignore[arg-type]

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        raise OSError("the caller went away")

    websocket = WebSocket({"type": "websocket", "path": URL, "headers": [], "query_string": b""}, receive, send)
    asyncio.run(container_terminal.serve(websocket, terminal))
    assert shell.process.poll() == -9, "the shell started for nobody is killed"
    assert docker.closed
