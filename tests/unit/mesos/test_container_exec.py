"""The agent's container exec: what a request may ask (Spindle containers only, a bounded argv, a
numeric user, a bounded timeout), that callers without the internal token and bad requests never
reach Docker, the NDJSON framing of the output and its end (exit code, timeout, cap, a caller gone),
and the kill of an exec's processes (its tree and its process group, found in /proc)."""
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from docker.errors import APIError
from fastapi.testclient import TestClient

from spindle_mesos_embedded import container_exec
from spindle_mesos_embedded.agent_app import build_agent_app
from spindle_mesos_embedded.container_exec import (
    MAX_ARG_CHARS,
    MAX_ARGS,
    ContainerNotRunning,
    ExecRequest,
    OutputFramer,
    exec_processes,
    kill_processes,
    parse_request,
    relay,
    start_exec,
)
from spindle_mesos_embedded.container_logs import NoSuchContainer
from tests.support.fake_docker import FakeContainer, FakeDocker, dockerd_answer

NAME = "spindle-c0123456789-server-1"


@pytest.mark.parametrize(("name", "body", "problem"), [
    (NAME, {"argv": ["id", "-u"]}, None),
    (NAME, {"argv": ["sh", "-c", "echo out; exit 3"], "timeout_s": 1}, None),
    (NAME, {"argv": ["x"] * MAX_ARGS, "timeout_s": 3600, "user": "65534:65534"}, None),
    (NAME, {"argv": ["cat", "a" * MAX_ARG_CHARS, ""], "user": "0"}, None),
    ("postgres", {"argv": ["id"]}, "not a Spindle container name"),
    ("spindle-../x", {"argv": ["id"]}, "not a Spindle container name"),
    (NAME, ["id"], "not a JSON object"),
    (NAME, {"argv": ["id"], "tty": True}, "unknown fields ['tty']"),
    (NAME, {"argv": ["id"], "privileged": True}, "unknown fields ['privileged']"),
    (NAME, {}, "argv must be a list"),
    (NAME, {"argv": "id -u"}, "argv must be a list"),
    (NAME, {"argv": []}, "argv must be a list"),
    (NAME, {"argv": ["x"] * (MAX_ARGS + 1)}, "argv must be a list"),
    (NAME, {"argv": ["id", 1]}, "argv[1] is not a string"),
    (NAME, {"argv": ["id", None]}, "argv[1] is not a string"),
    (NAME, {"argv": ["cat", "a" * (MAX_ARG_CHARS + 1)]}, "argv[1] is longer than"),
    (NAME, {"argv": ["cat", "a\x00b"]}, "argv[1] holds a NUL"),
    (NAME, {"argv": ["", "x"]}, "argv[0], the program, is empty"),
    (NAME, {"argv": ["id"], "user": "root"}, "user must be a numeric"),
    (NAME, {"argv": ["id"], "user": "0:0:0"}, "user must be a numeric"),
    (NAME, {"argv": ["id"], "user": 0}, "user must be a numeric"),
    (NAME, {"argv": ["id"], "timeout_s": 0}, "timeout_s must be"),
    (NAME, {"argv": ["id"], "timeout_s": 3601}, "timeout_s must be"),
    (NAME, {"argv": ["id"], "timeout_s": 2.5}, "timeout_s must be"),
    (NAME, {"argv": ["id"], "timeout_s": "10"}, "timeout_s must be"),
    (NAME, {"argv": ["id"], "timeout_s": True}, "timeout_s must be"),
])
def test_parse_request(name, body, problem):
    found = parse_request(name, body)
    if problem is None:
        assert isinstance(found, ExecRequest), found
    else:
        assert isinstance(found, str) and problem in found, found


def test_parse_request_defaults():
    assert parse_request(NAME, {"argv": ["id"]}) == ExecRequest(("id",), None, 300)


class FakeAgent:
    """Only what the route reads of an agent: its internal token."""

    token = "agent-internal-token"


def docker_never():
    raise AssertionError("Docker must not be asked")


GOOD = {"argv": ["id"]}
TOKEN = {"Authorization": "Bearer agent-internal-token"}


@pytest.mark.parametrize(("headers", "name", "body", "status"), [
    ({}, NAME, GOOD, 401),
    ({"Authorization": "Bearer wrong"}, NAME, GOOD, 401),
    (TOKEN, "postgres", GOOD, 400),
    (TOKEN, NAME, {"argv": []}, 400),
    (TOKEN, NAME, {"argv": ["id"], "timeout_s": 99999}, 400),
    (TOKEN, NAME, "not json", 400),
])
def test_refused_before_docker(headers, name, body, status):
    app = build_agent_app(FakeAgent(), docker_client=docker_never)  # type: ignore[arg-type]
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    answer = TestClient(app).post(f"/spindle/v1/containers/{name}/exec", content=content, headers=headers)
    assert answer.status_code == status, answer.text


# --- the output as NDJSON -------------------------------------------------------------------------

def lines_of(chunks: list[bytes]) -> list[dict]:
    return [json.loads(line) for chunk in chunks for line in chunk.splitlines()]


def test_a_character_split_between_chunks_is_whole_in_the_later_one():
    framer = OutputFramer()
    euro = "€".encode()
    assert framer.add("stdout", b"a" + euro[:1]) == b'{"stream": "stdout", "data": "a"}\n'
    assert json.loads(framer.add("stdout", euro[1:] + b"b")) == {"stream": "stdout", "data": "€b"}
    assert framer.add("stderr", euro[:2]) == b""  # stderr has its own decoder
    assert json.loads(framer.flush()) == {"stream": "stderr", "data": "\ufffd"}
    assert json.loads(framer.add("stdout", b"\xff")) == {"stream": "stdout", "data": "\ufffd"}


def test_output_past_the_limit_is_cut_there():
    framer = OutputFramer(limit=5)
    assert json.loads(framer.add("stdout", b"abc")) == {"stream": "stdout", "data": "abc"}
    assert not framer.truncated
    assert json.loads(framer.add("stderr", b"defgh")) == {"stream": "stderr", "data": "de"}
    assert framer.truncated and framer.left == 0


class FakeOutput:
    """docker-py's demuxed exec stream: the given frames, then (``block``) nothing until closed."""

    def __init__(self, frames, block: bool = False):
        self.frames, self.block = list(frames), block
        self.closed = threading.Event()

    def __iter__(self):
        return self

    def __next__(self):
        if self.frames:
            return self.frames.pop(0)
        if self.block:
            self.closed.wait(10)
        raise StopIteration

    def close(self):
        self.closed.set()


class FakeExec:
    """An exec as Docker knows it: killing it ends a blocked output (as the process's end would)."""

    def __init__(self, exit_code, output=None):
        self.code, self.output, self.kills = exit_code, output, 0

    def kill(self) -> bool:
        self.kills += 1
        if self.output is not None:
            self.output.close()
            self.code = 137
        return True

    def exit_code(self):
        return self.code


def run_relay(running, output, timeout_s=30.0, limit=2**20) -> list[dict]:
    ended = []
    found = lines_of(list(relay(running, output, timeout_s, lambda: ended.append(True), limit=limit)))  # type: ignore[arg-type]
    assert ended == [True], "the Docker client is closed at the end"
    return found


def test_chunks_in_order_then_the_exit_code():
    output = FakeOutput([(b"out\n", None), (None, b"err\n"), (b"more", None)])
    running = FakeExec(3)
    assert run_relay(running, output) == [
        {"stream": "stdout", "data": "out\n"}, {"stream": "stderr", "data": "err\n"},
        {"stream": "stdout", "data": "more"}, {"exit_code": 3}]
    assert running.kills == 0


def test_at_its_timeout_it_is_killed_and_says_so():
    output = FakeOutput([(b"started\n", None)], block=True)
    running = FakeExec(None, output)
    started = time.monotonic()
    assert run_relay(running, output, timeout_s=0.2) == [
        {"stream": "stdout", "data": "started\n"}, {"exit_code": 137, "timed_out": True}]
    assert running.kills == 1 and time.monotonic() - started < 5


def test_a_kill_that_does_not_end_it_still_ends_the_stream(monkeypatch):
    monkeypatch.setattr(container_exec, "CLOSE_GRACE_S", 0.1)
    output = FakeOutput([], block=True)
    running = FakeExec(None)  # its kill ends nothing: the agent stops reading after the grace
    assert run_relay(running, output, timeout_s=0.1) == [{"exit_code": None, "timed_out": True}]


def test_output_past_the_cap_kills_it():
    output = FakeOutput([(b"x" * 6, None), (b"y" * 6, None), (b"never", None)])
    running = FakeExec(None, output)
    assert run_relay(running, output, limit=10) == [
        {"stream": "stdout", "data": "xxxxxx"}, {"stream": "stdout", "data": "yyyy"},
        {"exit_code": 137, "truncated": True}]
    assert running.kills == 1


def test_a_caller_gone_kills_it():
    output = FakeOutput([(b"a", None), (b"b", None)])
    running, ended = FakeExec(None, output), []
    lines = relay(running, output, 30, lambda: ended.append(True))  # type: ignore[arg-type]
    assert json.loads(next(lines)) == {"stream": "stdout", "data": "a"}
    lines.close()
    assert running.kills == 1 and output.closed.is_set() and ended == [True]


# --- starting one -----------------------------------------------------------------------------------

class FakeApi:
    def __init__(self, create_error=None):
        self.create_error, self.created = create_error, []

    def exec_create(self, container_id, cmd, **options):
        if self.create_error:
            raise self.create_error
        self.created.append((container_id, cmd, options))
        return {"Id": "e1"}

    def exec_start(self, exec_id, stream, demux):
        assert (exec_id, stream, demux) == ("e1", True, True)
        return FakeOutput([(b"hi\n", None)])

    def exec_inspect(self, exec_id):
        return {"Running": False, "ExitCode": 0, "Pid": 0}


def test_start_runs_the_argv_as_it_is_unprivileged_without_a_tty():
    client = FakeDocker(FakeContainer({"io.spindle.owned": "true"}), FakeApi())
    lines = lines_of(list(start_exec(client, NAME, ExecRequest(("sh", "-c", "echo $HOME"), None, 5))))  # type: ignore[arg-type]
    assert lines == [{"stream": "stdout", "data": "hi\n"}, {"exit_code": 0}]
    [(container_id, cmd, options)] = client.api.created
    assert container_id == "abc123" and cmd == ["sh", "-c", "echo $HOME"]
    assert options == {"stdout": True, "stderr": True, "stdin": False, "tty": False, "privileged": False, "user": ""}
    assert client.closed


@pytest.mark.parametrize(("client", "raised"), [
    (FakeDocker(None, FakeApi()), NoSuchContainer),
    (FakeDocker(FakeContainer({}), FakeApi()), NoSuchContainer),
    (FakeDocker(FakeContainer({"io.spindle.owned": "false"}), FakeApi()), NoSuchContainer),
    (FakeDocker(FakeContainer({"io.spindle.owned": "true"}),
                FakeApi(APIError("is not running", response=dockerd_answer(409)))),
     ContainerNotRunning),
])
def test_start_refuses_what_is_not_a_running_spindle_container(client, raised):
    with pytest.raises(raised):
        start_exec(client, NAME, ExecRequest(("id",), None, 5))
    assert client.closed


# --- killing an exec's processes ------------------------------------------------------------------

def fake_proc(tmp_path: Path, table: dict[int, tuple[str, int, int]]) -> Path:
    """A /proc with a stat file per process: pid → (state, parent, process group)."""
    for pid, (state, parent, group) in table.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a name) with) {state} {parent} {group} {group} 0 0\n")
    (tmp_path / "self").mkdir()
    return tmp_path


@pytest.mark.parametrize(("table", "found"), [
    ({100: ("S", 1, 100)}, {100}),
    ({100: ("S", 1, 100), 101: ("S", 100, 100), 102: ("R", 101, 100)}, {100, 101, 102}),
    # a child that made its own group is found as a descendant, an orphan still in the group by it
    ({100: ("S", 1, 100), 101: ("S", 100, 101), 102: ("S", 101, 101), 103: ("S", 7, 100)}, {100, 101, 102, 103}),
    # zombies and strangers are left alone; the root gone, its group is still found
    ({100: ("Z", 1, 100), 101: ("S", 100, 100), 5: ("S", 1, 5), 6: ("S", 5, 5)}, {101}),
    ({7: ("S", 1, 7)}, set()),
])
def test_the_processes_of_an_exec(tmp_path, table, found):
    assert exec_processes(100, fake_proc(tmp_path, table)) == found


def test_the_exec_s_first_process_is_killed_before_its_children(tmp_path, monkeypatch):
    """A shell whose children died first would finish its `wait` and run on (it did: exit 0, not -9)."""
    proc = fake_proc(tmp_path, {101: ("S", 103, 103), 102: ("S", 103, 103), 103: ("S", 1, 103)})
    signalled: list[int] = []
    monkeypatch.setattr(container_exec.os, "kill", lambda pid, _: signalled.append(pid))
    monkeypatch.setattr(container_exec.time, "sleep", lambda _: None)
    kill_processes(103, lambda pid: True, proc, rounds=1)
    assert signalled[0] == 103 and sorted(signalled) == [101, 102, 103]


def _settles(read, wanted, timeout_s=10):
    """Whether `read()` comes to equal `wanted` within the timeout (a killed process is gone only
    once the kernel has run its exit, which a loaded machine may take a while to schedule)."""
    deadline = time.monotonic() + timeout_s
    while read() != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
    return read() == wanted


def test_kill_ends_a_shell_and_its_background_children():
    shell = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 61 & wait"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(exec_processes(shell.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        processes = exec_processes(shell.pid)
        assert len(processes) == 3, processes
        spared = max(processes - {shell.pid})
        # Only what `belongs` says is the container's is signalled.
        assert kill_processes(shell.pid, lambda pid: pid not in (shell.pid, spared)) >= 1
        assert _settles(lambda: exec_processes(shell.pid), {shell.pid, spared})  # SIGKILL takes effect
        assert kill_processes(shell.pid, lambda pid: True) >= 2
        assert shell.wait(10) == -9
        assert _settles(lambda: exec_processes(shell.pid), set())  # the orphan is reaped by init
    finally:
        if shell.poll() is None:
            os.killpg(shell.pid, 9)
            shell.wait()
