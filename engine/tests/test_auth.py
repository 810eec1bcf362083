"""Data-plane authentication (rpc/AUTH.md): with a cluster secret, engine agents, executors
(Python and C++) and file servers refuse callers that do not hold it — before reading any of
their protocol, so a pickled function sent by a stranger is never unpickled — and the engine
works as before for a driver that holds it. Local mode (no secret) is covered by every other
test of engine/tests."""

import os
import pickle
import socket
import subprocess
import sys
import threading
from collections import Counter

import pytest
from thrift.transport.TTransport import TTransportException

from spindle_engine import Cluster, Properties, Worker
from spindle_engine.auth import ENV, MAGIC, AuthFailed, client_handshake, server_handshake
from spindle_engine.backend.remote import AgentConnection, AgentUnreachable
from spindle_engine.errors import FetchFailed
from spindle_engine.fileserver import FileServer, fetch, url
from spindle_engine.rpc import Agent, Executor, agent_types, close_quietly, connect, ttypes

from .conftest import TESTS

PACKAGE = os.path.join(os.path.dirname(TESTS), "python")
CPP_EXECUTOR = os.path.join(os.path.dirname(TESTS), "cpp", "build", "spindle-cpp-executor")
SECRET = "5f" * 32


class Opens:
    """A pickle that, when loaded, creates the file `path` (what an attacker's payload could do)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def attack_task(marker):
    """A task whose first op's pickled function creates `marker` when it is unpickled."""
    fn = ttypes.Function(ref="attack", pickled=pickle.dumps(Opens(str(marker))))
    return ttypes.Task(stage="attack", partition=0,
                       source=ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[]),
                       ops=[ttypes.Op(kind=ttypes.OpKind.MAP, fn=fn)],
                       sink=ttypes.Sink(kind=ttypes.SinkKind.COUNT))


def _start(cmd, secret):
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    env.pop(ENV, None)
    if secret:
        env[ENV] = secret
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    line = proc.stdout.readline().decode()
    assert line.startswith("READY"), line
    return proc, int(line.split()[1])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def agents(tmp_path):
    procs = []
    for name in ("a", "b"):
        disks = [str(tmp_path / name / d) for d in ("disk1", "disk2")]
        for d in disks:
            os.makedirs(d)
        procs.append(_start([sys.executable, "-m", "spindle_engine.agent", "--bind", "127.0.0.1",
                             "--port", "0", "--work", ",".join(disks), "--cores", "1"], SECRET))
    yield [f"127.0.0.1:{port}" for _, port in procs]
    for proc, _ in procs:
        proc.kill()
        proc.wait()


def _executor(tmp_path, language, secret):
    port = _free_port()
    program = [CPP_EXECUTOR] if language == "cpp" else [sys.executable, "-m", "spindle_engine.executor"]
    proc, _ = _start([*program, "--port", str(port), "--id", "0", "--cores", "1",
                      "--scratch", str(tmp_path)], secret)
    return proc, port


def test_handshake_proves_the_secret_both_ways():
    for client_secret, server_secret, ok in [(b"s", b"s", True), (b"s", b"t", False)]:
        a, b = socket.socketpair()
        errors = []

        def serve(server_secret=server_secret, b=b, errors=errors):
            try:
                server_handshake(b, server_secret)
            except AuthFailed as e:
                errors.append(e)
            finally:
                b.close()

        t = threading.Thread(target=serve)
        t.start()
        if ok:
            client_handshake(a, client_secret)
        else:
            with pytest.raises(AuthFailed):
                client_handshake(a, client_secret)
        a.close()  # as a refused caller's connection is: the server stops waiting for its proof
        t.join()
        assert bool(errors) != ok


def test_driver_with_the_secret_runs_python_and_cpp_across_hosts(engine, agents, fn, monkeypatch,
                                                                 tmp_path):
    monkeypatch.setenv(ENV, SECRET)
    text = "\n".join(f"w{i % 7} w{i % 3} é" for i in range(2000)) + "\n"
    path = tmp_path / "input.txt"
    path.write_text(text, encoding="utf-8")
    cluster = Cluster(Properties({"engine.mode": "cluster", "engine.agents": ",".join(agents)}))
    try:
        python = Worker(cluster, "python")
        words = python.textFile(str(path), 4).flatMap(fn("wordcount.py:Split"))
        assert dict(words.reduceByKey(fn("wordcount.py:Join"), 3).collect()) == Counter(text.split())
        assert sorted(python.parallelize(range(100), 4).map(lambda x: x * 2).collect()) == \
            [x * 2 for x in range(100)]
        if os.access(CPP_EXECUTOR, os.X_OK):  # C++ executors: handshake as server and as fetch client
            lib = os.path.join(os.path.dirname(CPP_EXECUTOR), "examples", "libbasic.so:AddOne")
            cpp = Worker(cluster, "cpp")
            assert sorted(cpp.parallelize(list(range(500)), 4).map(lib).collect()) == \
                list(range(1, 501))
    finally:
        cluster.stop()


def test_agent_refuses_a_caller_without_the_secret(agents, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    host, _, port = agents[0].rpartition(":")
    transport, client = connect(host, int(port), 5000, service=Agent)
    try:
        with pytest.raises((TTransportException, EOFError, OSError)):
            client.spawn(agent_types.ExecutorSpec(language="python", id=0, cores=1, memory=1 << 28,
                                                  session="stranger"))
    finally:
        close_quietly(transport)
    monkeypatch.setenv(ENV, "0" * 64)  # the wrong secret
    with pytest.raises(AgentUnreachable):
        AgentConnection(agents[0])
    monkeypatch.setenv(ENV, SECRET)
    agent = AgentConnection(agents[0])
    try:
        assert agent.info.cores == 1
    finally:
        agent.close()


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_executor_never_unpickles_a_strangers_function(tmp_path, monkeypatch, language):
    if language == "cpp" and not os.access(CPP_EXECUTOR, os.X_OK):
        pytest.skip("C++ executor not built")
    proc, port = _executor(tmp_path, language, SECRET)
    marker = tmp_path / "pwned"
    try:
        monkeypatch.delenv(ENV, raising=False)
        transport, client = connect("127.0.0.1", port, 5000, service=Executor)
        with pytest.raises((TTransportException, EOFError, OSError)):
            client.run(attack_task(marker))
        close_quietly(transport)
        assert not marker.exists()
        assert proc.poll() is None  # the executor still serves

        monkeypatch.setenv(ENV, SECRET)
        transport, client = connect("127.0.0.1", port, 5000, service=Executor)
        try:
            assert client.hello({}).language == language
            if language == "python":  # with the secret the same payload is unpickled: it was real
                with pytest.raises(ttypes.TaskError):
                    client.run(attack_task(marker))
                assert marker.exists()
        finally:
            close_quietly(transport)
    finally:
        proc.kill()
        proc.wait()


def test_executor_without_a_secret_needs_no_handshake(tmp_path, monkeypatch):
    """Local mode: no secret on either side, the protocol is unchanged."""
    monkeypatch.delenv(ENV, raising=False)
    proc, port = _executor(tmp_path, "python", None)
    try:
        transport, client = connect("127.0.0.1", port, 5000, service=Executor)
        assert client.hello({}).language == "python"
        close_quietly(transport)
    finally:
        proc.kill()
        proc.wait()


def test_file_server_refuses_a_caller_without_the_secret(tmp_path, monkeypatch):
    data = tmp_path / "data" / "1"
    data.mkdir(parents=True)
    (data / "part.bin").write_bytes(b"tenant data")
    server = FileServer([str(data)], secret=SECRET.encode()).start()
    try:
        target = url(server.address, str(data / "part.bin"))
        for secret in (None, "0" * 64):
            if secret is None:
                monkeypatch.delenv(ENV, raising=False)
            else:
                monkeypatch.setenv(ENV, secret)
            with pytest.raises(FetchFailed):
                fetch(target, str(tmp_path / "stolen"))
            assert not (tmp_path / "stolen").exists()
        host, _, port = server.address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=5) as s:  # a raw request
            s.sendall(f"GET 0 -1 {data / 'part.bin'}\n".encode().ljust(len(MAGIC) + 32, b" "))
            assert s.recv(100) == b""  # closed, nothing served
        monkeypatch.setenv(ENV, SECRET)
        fetch(target, str(tmp_path / "fetched"))
        assert (tmp_path / "fetched").read_bytes() == b"tenant data"
        assert server.stats["files_served"] == 1
    finally:
        server.shutdown()
        server.server_close()
