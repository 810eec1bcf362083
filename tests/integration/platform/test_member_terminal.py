"""A member's terminal through the public API on the running platform (a static-web cluster): a real
WebSocket from outside a browser (no Origin), the API token offered as the subprotocol
``bearer.<token>`` beside ``spindle.terminal``.

The owner types into a shell that runs as the member's own user (``id -u``: 65534), resizes it and
reads the size back (``stty size``), and ends it with ``exit`` (the end frame: exit code 0); a
session closed from this side leaves no process of the shell in the container (read with an exec's
listing of /proc, as the exec test does). A stranger's token is 404, another site's Origin 403, no
token 401, all before the upgrade; the sessions are in ``GET …/execs`` (kind ``terminal``)."""
import json
import re
import time

import httpx
import pytest
from websockets.exceptions import ConnectionClosedOK, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import running_cluster

LAUNCH = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}
WS_URL = API_URL.replace("http://", "ws://")


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "terminal") as client:
        yield client


@pytest.fixture(scope="module")
def cluster(owner):
    with running_cluster(owner, "static-web", "1.0", LAUNCH) as running:
        yield running


def cluster_path(cluster: dict) -> str:
    return f"/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}"


def open_terminal(cluster: dict, token: str | None, member: str = "server-1", origin: str | None = None,
                  protocols: list[str] | None = None) -> ClientConnection:
    offered = protocols if protocols is not None else \
        ["spindle.terminal", *([f"bearer.{token}"] if token is not None else [])]
    headers = {"Origin": origin} if origin is not None else None
    return connect(f"{WS_URL}{cluster_path(cluster)}/members/{member}/terminal", subprotocols=offered,
                   additional_headers=headers, open_timeout=30, max_size=2**20)


def read_until(ws: ClientConnection, pattern: str, timeout: float = 30) -> str:
    """The terminal's output until ``pattern`` (a regular expression) is in it."""
    seen, deadline = "", time.monotonic() + timeout
    while not re.search(pattern, seen):
        left = deadline - time.monotonic()
        assert left > 0, f"no {pattern!r} in the terminal's output: {seen!r}"
        try:
            frame = ws.recv(timeout=left)
        except TimeoutError:
            raise AssertionError(f"no {pattern!r} in the terminal's output: {seen!r}") from None
        if isinstance(frame, bytes):
            seen += frame.decode(errors="replace")
        else:
            assert "error" not in json.loads(frame), frame
    return seen


def test_the_owner_types_resizes_and_exits(owner, cluster):
    with open_terminal(cluster, owner.token) as ws:
        assert ws.subprotocol == "spindle.terminal", "the server accepts the terminal's subprotocol, not the token"
        ws.send(json.dumps({"resize": [132, 43]}))
        ws.send(b"id -u\r")
        read_until(ws, r"[\r\n]65534\r\n")  # a line of its own (bash ends its bracketed paste with \r)
        ws.send(b"stty size\r")
        read_until(ws, r"[\r\n]43 132\r\n")
        assert exit_shell(ws) == {"exit_code": 0, "reason": "exited"}


def exit_shell(ws: ClientConnection) -> dict:
    """Type ``exit``; the end frame, after which the server closes normally."""
    ws.send(b"exit\r")
    end = None
    deadline = time.monotonic() + 30
    while end is None and time.monotonic() < deadline:
        frame = ws.recv(timeout=30)
        if isinstance(frame, str):
            end = json.loads(frame)
    with pytest.raises(ConnectionClosedOK):  # then the close, a normal one
        ws.recv(timeout=10)
    assert ws.close_code == 1000
    assert end is not None, "no end frame"
    return end


def exec_output(owner, cluster: dict, command: list[str]) -> str:
    found = ""
    with httpx.stream("POST", f"{API_URL}{cluster_path(cluster)}/members/server-1/exec",
                      json={"command": command, "timeout_s": 60}, headers={"Authorization": f"Bearer {owner.token}"},
                      timeout=httpx.Timeout(30, read=120)) as answer:
        assert answer.status_code == 200, answer.read()
        for line in answer.iter_lines():
            if line and "stream" in (data := json.loads(line)):
                found += data["data"]
    return found


def test_closing_the_terminal_leaves_no_shell_behind(owner, cluster):
    seconds = 3000 + time.time_ns() % 997
    with open_terminal(cluster, owner.token) as ws:
        ws.send(f"sleep {seconds} &\r".encode())
        ws.send(b"echo started-$((6*7))\r")
        read_until(ws, r"started-42")
    listing = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
    deadline, left = time.monotonic() + 20, "?"
    while time.monotonic() < deadline:
        left = exec_output(owner, cluster, ["sh", "-c", listing])
        if f"sleep {seconds}" not in left and not re.search(r"(?m)^bash\s*$", left):
            break
        time.sleep(1)
    assert f"sleep {seconds}" not in left, f"the terminal's background job lives on: {left!r}"
    assert not re.search(r"(?m)^bash\s*$", left), f"the terminal's shell lives on: {left!r}"


def refusal(cluster: dict, **kwargs) -> tuple[int, dict]:
    with pytest.raises(InvalidStatus) as refused:
        open_terminal(cluster, **kwargs)
    response = refused.value.response
    return response.status_code, json.loads(response.body or b"{}")


def test_refusals_before_the_upgrade(database_url, owner, cluster):
    with live_user(database_url, "terminal-other") as stranger:
        status, body = refusal(cluster, token=stranger.token)
        assert (status, body["error"]["code"]) == (404, "CLUSTER_NOT_FOUND"), body
    status, body = refusal(cluster, token=owner.token, origin="http://evil.example")
    assert (status, body["error"]["code"]) == (403, "ORIGIN_NOT_ALLOWED"), body
    status, body = refusal(cluster, token=None)
    assert (status, body["error"]["code"]) == (401, "UNAUTHENTICATED"), body
    status, body = refusal(cluster, token=owner.token, member="server-9")
    assert (status, body["error"]["code"]) == (404, "MEMBER_NOT_FOUND"), body
    # The page's own origin is allowed.
    with open_terminal(cluster, owner.token, origin=API_URL) as ws:
        ws.send(b"echo same-origin-$((6*7))\r")
        read_until(ws, r"same-origin-42")


def test_sessions_are_recorded(owner, cluster):
    with open_terminal(cluster, owner.token) as ws:  # one the shell ends
        assert exit_shell(ws)["exit_code"] == 0
    with open_terminal(cluster, owner.token) as ws:  # one this side closes
        ws.send(b"true\r")
    # The api-server completes a closed session's record once the node's side has closed too.
    deadline, sessions = time.monotonic() + 30, []
    while time.monotonic() < deadline:
        answer = httpx.get(f"{API_URL}{cluster_path(cluster)}/execs",
                           headers={"Authorization": f"Bearer {owner.token}"}, timeout=30)
        assert answer.status_code == 200, answer.text
        sessions = [r for r in answer.json() if r["kind"] == "terminal"]
        if sessions and all(r["finished_at"] for r in sessions):
            break
        time.sleep(0.5)
    assert sessions, answer.json()
    assert all(r["command"] == ["<terminal>"] and r["username"] == owner.username for r in sessions)
    assert all(r["member_id"] == cluster["members"][0]["member_id"] for r in sessions)
    exited = [r for r in sessions if r["exit_code"] == 0]
    closed = [r for r in sessions if r["error"] == "CLOSED"]
    assert exited and closed and all(r["finished_at"] for r in exited + closed), sessions


def test_a_session_is_recorded_ended_before_its_caller_hears_of_the_end(owner, cluster):
    """Who saw the shell exit and then lists the member's execs finds the session ended, at once (CI
    run 36's browser test read the record between the end frame and its completion)."""
    for attempt in range(40):
        with open_terminal(cluster, owner.token) as ws:
            ws.send(b"exit\r")
            while not isinstance(frame := ws.recv(timeout=30), str):  # output, then the end frame
                pass
            assert json.loads(frame)["exit_code"] == 0
            records = httpx.get(f"{API_URL}{cluster_path(cluster)}/execs",
                                headers={"Authorization": f"Bearer {owner.token}"}, timeout=30).json()
            newest = max((r for r in records if r["kind"] == "terminal"), key=lambda r: r["id"])
            assert (newest["exit_code"], newest["finished_at"] is not None) == (0, True), (attempt, newest)
