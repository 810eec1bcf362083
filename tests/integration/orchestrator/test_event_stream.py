"""A cluster's timeline as a live SSE stream on real PostgreSQL: events arrive as they are committed
(pushed by NOTIFY, not polled), the stream ends when the cluster settles — or, with ``follow``,
only once it is destroyed — and an open stream holds no worker thread."""
import json
import queue
import threading
import time

import httpx
import pytest
from sqlalchemy import update

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_orchestrator.clusters import record_event
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster
from tests.support.internal import internal_headers
from tests.support.live_server import serve

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")


@pytest.fixture
def orchestrator(fresh_database):
    """The orchestrator's API without its worker: the test moves clusters itself."""
    migrations.upgrade("spindle_orchestrator", fresh_database)
    app = build_app(Settings(database_url=fresh_database, internal_token=TOKEN))
    with serve(app) as url:
        yield url, session_factory(fresh_database)
    app.state.event_hub.stop()


def messages(url: str, path: str, into: queue.Queue) -> threading.Thread:
    """Read the SSE stream at ``path`` in a thread; each message as (event, data) into ``into``."""

    def read() -> None:
        with httpx.stream("GET", url + path, headers=AS_API, timeout=30) as response:
            event = None
            for line in response.iter_lines():
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    into.put((event, json.loads(line.removeprefix("data: "))))
        into.put(("closed", None))

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def settle(sessions, cluster_id: str, state: str) -> None:
    with sessions.begin() as session:
        session.execute(update(Cluster).where(Cluster.id == cluster_id).values(state=state))
        record_event(session, cluster_id, "cluster", state, "moved by the test")


def test_events_arrive_as_committed_and_the_stream_ends_when_the_cluster_settles(orchestrator):
    url, sessions = orchestrator
    cluster = httpx.post(f"{url}/clusters", headers=AS_API, json={
        "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0", "options": {}}).json()
    seen: queue.Queue = queue.Queue()
    messages(url, f"/clusters/{cluster['id']}/events/stream", seen)
    assert seen.get(timeout=10)[1]["state"] == "PENDING"  # the timeline so far
    assert seen.empty()

    with sessions.begin() as session:  # not committed yet: nothing is sent
        record_event(session, cluster["id"], "member", "TASK_STARTING", "", "m-1")
        time.sleep(0.5)
        assert seen.empty()
    event, data = seen.get(timeout=10)  # committed: pushed
    assert (event, data["state"], data["member_id"]) == ("event", "TASK_STARTING", "m-1")

    settle(sessions, cluster["id"], "RUNNING")
    assert seen.get(timeout=10)[1]["state"] == "RUNNING"
    event, data = seen.get(timeout=10)
    assert (event, data["state"], data["id"]) == ("end", "RUNNING", cluster["id"])
    assert seen.get(timeout=10) == ("closed", None)


def test_follow_stays_open_after_running_until_the_cluster_is_destroyed(orchestrator):
    url, sessions = orchestrator
    cluster = httpx.post(f"{url}/clusters", headers=AS_API, json={
        "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0", "options": {}}).json()
    settle(sessions, cluster["id"], "RUNNING")
    seen: queue.Queue = queue.Queue()
    messages(url, f"/clusters/{cluster['id']}/events/stream?follow=true", seen)
    assert [seen.get(timeout=10)[1]["state"] for _ in range(2)] == ["PENDING", "RUNNING"]
    settle(sessions, cluster["id"], "DEGRADED")
    settle(sessions, cluster["id"], "RUNNING")
    assert [seen.get(timeout=10)[1]["state"] for _ in range(2)] == ["DEGRADED", "RUNNING"]
    settle(sessions, cluster["id"], "DESTROYED")
    assert seen.get(timeout=10)[1]["state"] == "DESTROYED"
    assert seen.get(timeout=10)[0] == "end"


def test_many_open_streams_hold_no_threads(orchestrator):
    """A hundred streams of a cluster that does not settle: the service still answers at once."""
    url, _ = orchestrator
    cluster = httpx.post(f"{url}/clusters", headers=AS_API, json={
        "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0", "options": {}}).json()
    seen: queue.Queue = queue.Queue()
    for _ in range(100):
        messages(url, f"/clusters/{cluster['id']}/events/stream", seen)
    first = [seen.get(timeout=30) for _ in range(100)]
    assert {data["state"] for _, data in first} == {"PENDING"}
    before = threading.active_count()
    started = time.monotonic()
    assert httpx.get(f"{url}/clusters/{cluster['id']}", headers=AS_API, timeout=10).status_code == 200
    assert threading.active_count() <= before + 2
    assert time.monotonic() - started < 10  # not stuck behind the streams (a generous bound, not a benchmark)
