"""Authenticated data planes (issue 15) on the real stack: an engine cluster (1 backend + 1
executor member) and a Spark cluster (1 master + 1 worker) launched through the public API.

A caller without the cluster secret — this test process, on the host, which reaches every member
by its floating IP as another tenant's container could — is refused by the engine agent (no
executor started), by an executor (a pickled function that would create a file is never
unpickled) and by the file server (nothing of /data/1 served); with the secret, read from the
member's env by `docker inspect` as the host's root, the same calls work. On Spark, a PySpark
driver without the secret (started by a job of the cluster with its env stripped, as another
tenant's driver reaching the master would be) gets no application onto the master, while the job
Spindle started (with the secret) runs. The secret is in no API answer and no service's log."""
import json
import os
import pickle
import secrets
import threading
import time
from pathlib import Path

import docker
import httpx
import pytest
from thrift.transport.TTransport import TTransportException

from spindle_client.client import SpindleError
from spindle_engine.auth import ENV
from spindle_engine.backend.remote import AgentConnection, AgentUnreachable
from spindle_engine.errors import FetchFailed
from spindle_engine.fileserver import fetch, url
from spindle_engine.rpc import Agent, Executor, agent_types, close_quietly, connect, ttypes
from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.jobs import result_of
from tests.support.live_users import live_user

HERE = Path(__file__).resolve().parent
REFUSED = (TTransportException, EOFError, OSError)
ENDED = ("SUCCEEDED", "FAILED", "KILLED")
LOGS = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "log"


def retrying(call):
    """call(), waiting up to 2 min for a service another test restarts (unreachable, 502, 503)."""
    for _ in range(120):
        try:
            return call()
        except SpindleError as exc:
            if exc.status not in (0, 502, 503):
                raise
            time.sleep(1)
    return call()


@pytest.fixture(scope="module")
def clusters(database_url, platform_env):
    """Both clusters, launched at once (they settle in parallel), destroyed after the module."""
    with live_user(database_url, "dataplane") as user:
        small = {"wait_for_resources": True}  # the machine may be busy with other tests: queue, do not fail
        launched = [user.launch("engine", "1.0", {**small, "roles": {
                        "backend": {"cpus": 0.1}, "executor": {"count": 1, "cpus": 0.25, "disks": {"hdd": 1}}}}),
                    user.launch("spark", "3.5", {**small, "roles": {
                        "master": {"cpus": 0.25}, "worker": {"count": 1, "cpus": 0.25, "disks": {"hdd": 1}}}})]
        try:
            settled = [retrying(lambda c=c: wait_settled(user, c, ("RUNNING", "FAILED"), timeout=600))
                       for c in launched]
            for c in settled:
                assert c["state"] == "RUNNING", (c["product"], c["reason_code"], c["reason"])
            yield user, {c["product"]: c for c in settled}
        finally:
            for c in launched:
                retrying(lambda c=c: user.delete(c))
            for c in launched:
                final = retrying(lambda c=c: wait_settled(user, c, ("DESTROYED",), timeout=300))
                assert final["state"] == "DESTROYED"
                assert_nothing_left(platform_env, final)


def container_of(member: dict):
    [container] = docker.from_env().containers.list(filters={"label": f"io.spindle.member={member['member_id']}"})
    return container


def secret_of(container) -> str:
    env = dict(e.split("=", 1) for e in container.attrs["Config"]["Env"])
    return env[ENV]


def executors_in(container) -> list[str]:
    """Command lines of the engine executor processes running in the member's container."""
    code, out = container.exec_run(["pgrep", "-af", "spindle_engine.executor"])
    return out.decode().splitlines() if code == 0 else []


def exists_in(container, path: str) -> bool:
    return container.exec_run(["test", "-e", path]).exit_code == 0


class Opens:
    """A pickle that creates the file ``path`` when it is loaded (an attacker's payload)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def attack_task(path: str):
    fn = ttypes.Function(ref="attack", pickled=pickle.dumps(Opens(path)))
    return ttypes.Task(stage="attack", partition=0, source=ttypes.Source(kind=ttypes.SourceKind.FILES, paths=[]),
                       ops=[ttypes.Op(kind=ttypes.OpKind.MAP, fn=fn)], sink=ttypes.Sink(kind=ttypes.SinkKind.COUNT))


def test_every_member_and_no_view_holds_the_secret(clusters):
    user, by_product = clusters
    seen = set()
    for cluster in by_product.values():
        mine = {secret_of(container_of(m)) for m in cluster["members"]}
        assert len(mine) == 1, "one secret per cluster, the same in every member"
        [secret] = mine
        assert len(secret) == 64 and secret not in seen
        seen.add(secret)
        answers = json.dumps([user.cluster(cluster), user.events(cluster)], default=str)
        assert secret not in answers
        for log in LOGS.glob("*.log"):  # nor in what the platform's services logged
            assert secret.encode() not in log.read_bytes(), log


def test_engine_agent_and_executor_refuse_callers_without_the_secret(clusters, monkeypatch):
    _, by_product = clusters
    member = next(m for m in by_product["engine"]["members"] if m["role"] == "executor")
    container = container_of(member)
    agent_address = f"{member['ip']}:7077"
    secret = secret_of(container)
    assert executors_in(container) == []

    # The agent: a spawn without the secret is cut off before it is read; no executor starts.
    monkeypatch.delenv(ENV, raising=False)
    transport, client = connect(member["ip"], 7077, 10_000, service=Agent)
    try:
        with pytest.raises(REFUSED):
            client.spawn(agent_types.ExecutorSpec(language="python", id=0, cores=1, memory=1 << 28,
                                                  session="stranger"))
    finally:
        close_quietly(transport)
    monkeypatch.setenv(ENV, secrets.token_hex(32))  # a secret, not this cluster's
    with pytest.raises(AgentUnreachable):
        AgentConnection(agent_address)
    assert executors_in(container) == []

    # With the secret the agent starts an executor.
    monkeypatch.setenv(ENV, secret)
    agent = AgentConnection(agent_address)
    try:
        port = agent.spawn(agent_types.ExecutorSpec(language="python", id=0, cores=1, memory=1 << 28,
                                                    session="sectest"))
        assert len(executors_in(container)) == 1

        # The executor: run() of a pickled function without the secret: refused, never unpickled.
        marker = f"/tmp/pwned-{secrets.token_hex(4)}"
        monkeypatch.delenv(ENV)
        transport, client = connect(member["ip"], port, 10_000, service=Executor)
        try:
            with pytest.raises(REFUSED):
                client.run(attack_task(marker))
        finally:
            close_quietly(transport)
        assert not exists_in(container, marker)
        # With the secret the same payload is unpickled: it is a real attack.
        monkeypatch.setenv(ENV, secret)
        transport, client = connect(member["ip"], port, 10_000, service=Executor)
        try:
            assert client.hello({}).language == "python"
            with pytest.raises(ttypes.TaskError):
                client.run(attack_task(marker))
        finally:
            close_quietly(transport)
        assert exists_in(container, marker)
    finally:
        agent.close()


def test_engine_file_server_serves_data_only_to_the_secret_holder(clusters, monkeypatch, tmp_path):
    _, by_product = clusters
    member = next(m for m in by_product["engine"]["members"] if m["role"] == "executor")
    container = container_of(member)
    secret = secret_of(container)
    monkeypatch.setenv(ENV, secret)
    content = secrets.token_hex(16)
    assert container.exec_run(["sh", "-c", f"echo {content} > /data/1/served.txt"]).exit_code == 0
    agent = AgentConnection(f"{member['ip']}:7077")
    try:
        target = url(agent.info.file_server, "/data/1/served.txt")
        served = agent.stats()["files_served"]
        monkeypatch.delenv(ENV)
        with pytest.raises(FetchFailed):
            fetch(target, str(tmp_path / "stolen"))
        assert not (tmp_path / "stolen").exists()
        monkeypatch.setenv(ENV, secrets.token_hex(32))  # a secret, not this cluster's
        with pytest.raises(FetchFailed):
            fetch(target, str(tmp_path / "stolen"))
        assert not (tmp_path / "stolen").exists()
        monkeypatch.setenv(ENV, secret)
        assert agent.stats()["files_served"] == served  # nothing was served to either
        fetch(target, str(tmp_path / "got"))
        assert (tmp_path / "got").read_text().strip() == content
        assert agent.stats()["files_served"] == served + 1
    finally:
        agent.close()


def test_engine_job_of_the_cluster_holds_the_secret_and_runs(clusters):
    """Spindle's own driver gets the secret: agents, executors, fetches from its file server work."""
    user, by_product = clusters
    cluster = by_product["engine"]
    job = user.submit(cluster, HERE / "jobs" / "engine_tenant.py")
    deadline = time.monotonic() + 300
    while (job := retrying(lambda j=job: user.job(cluster, j["id"])))["state"] not in ENDED:
        assert time.monotonic() < deadline, job
        time.sleep(1)
    assert job["state"] == "SUCCEEDED", (job["message"], job["stderr"][-4000:])
    result = result_of(job)
    assert result["sum"] == sum(range(10_000)) and result["groups"] == 7
    assert result["hosts"] == [m["ip"] for m in cluster["members"] if m["role"] == "executor"]


def test_spark_master_refuses_a_driver_without_the_secret(clusters):
    user, by_product = clusters
    cluster = by_product["spark"]
    master = next(m for m in cluster["members"] if m["role"] == "master")
    apps: set[str] = set()
    stop = threading.Event()

    def watch():  # every application the master ever lists while the job runs
        while not stop.is_set():
            try:
                state = httpx.get(f"http://{master['ip']}:8080/json/", timeout=5).json()
                apps.update(a["name"] for key in ("activeapps", "completedapps") for a in state.get(key, []))
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        job = user.submit(cluster, HERE / "jobs" / "spark_stranger.py", args=[f"spark://{master['ip']}:7077"])
        deadline = time.monotonic() + 400
        while (job := retrying(lambda j=job: user.job(cluster, j["id"])))["state"] not in ENDED:
            assert time.monotonic() < deadline, job
            time.sleep(1)
    finally:
        stop.set()
        watcher.join()
    assert job["state"] == "SUCCEEDED", (job["message"], job["stderr"][-4000:])
    result = result_of(job)
    assert result["count"] == 1000  # the driver Spindle gave the secret runs its application
    stranger = result["stranger_output"]
    assert result["stranger_exit"] not in (0, None), stranger
    assert "STRANGER COUNT" not in stranger
    assert "Failed to connect to master" in stranger, stranger  # refused (then stopped: Spark retries for a minute)
    assert "tenant" in apps and "stranger" not in apps, apps
    master_log = container_of(master).logs().decode(errors="replace")
    assert "Registering app tenant" in master_log and "Registering app stranger" not in master_log
