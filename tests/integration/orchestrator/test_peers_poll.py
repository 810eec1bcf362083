"""The peer-set long poll the executors wait on (``GET /internal/clusters/{id}/peers``), on real
PostgreSQL: every executor of a cluster is woken by the same change, and they share one read of it —
never one begun before the change."""
import threading
import time

import httpx
import pytest

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_orchestrator import peers
from spindle_orchestrator.clusters import record_event
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster, Member
from tests.support.internal import internal_headers
from tests.support.live_server import serve

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")
WAITERS = 6


@pytest.fixture
def orchestrator(fresh_database):
    """The orchestrator's API without its worker (and without a floating-IP pool: no tenant ranges)."""
    migrations.upgrade("spindle_orchestrator", fresh_database)
    app = build_app(Settings(database_url=fresh_database, internal_token=TOKEN, network_pool=""))
    with serve(app) as url:
        yield app, url, session_factory(fresh_database)
    app.state.event_hub.stop()


def add_member(sessions, cluster_id: str, index: int, ip: str) -> None:
    """A member at ``ip`` recorded as the worker records one, with its event (which notifies)."""
    member_id = f"{cluster_id}-server-{index}"
    with sessions.begin() as session:
        session.add(Member(member_id=member_id, cluster_id=cluster_id, role="server",
                           index=index, state="TASK_RUNNING", spec={}, ip=ip, node="node-1", message="",
                           disks=[], ports=[]))
        session.get(Cluster, cluster_id).state = "RUNNING"
        record_event(session, cluster_id, "member", "TASK_RUNNING", "placed by the test", member_id)


def test_every_waiting_executor_gets_the_change_from_one_shared_read(orchestrator, monkeypatch):
    app, url, sessions = orchestrator
    cluster_id = httpx.post(f"{url}/clusters", headers=AS_API, timeout=10, json={
        "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0", "options": {}}).json()["id"]
    add_member(sessions, cluster_id, 1, "10.9.0.2")
    path = f"{url}/internal/clusters/{cluster_id}/peers"
    first = httpx.get(path, headers=AS_API, timeout=10).json()
    assert "peers" in first, first
    assert first["peers"] == ["10.9.0.2"]

    reads = []
    real_peer_set = peers.peer_set

    def counted(session, cid, pool, *rest):
        reads.append(cid)
        return real_peer_set(session, cid, pool, *rest)

    monkeypatch.setattr(peers, "peer_set", counted)
    answers: list[dict] = []

    def wait() -> None:
        answers.append(httpx.get(path, headers=AS_API, timeout=40,
                                 params={"known": first["version"], "wait": 25}).json())

    threads = [threading.Thread(target=wait) for _ in range(WAITERS)]
    for thread in threads:
        thread.start()
    hub = app.state.event_hub
    deadline = time.monotonic() + 30
    while len(hub.waiters.get(cluster_id, ())) < WAITERS:  # every poll is in, waiting
        assert time.monotonic() < deadline, "the polls did not all arrive"
        time.sleep(0.05)
    reads.clear()
    add_member(sessions, cluster_id, 2, "10.9.0.3")
    for thread in threads:
        thread.join(timeout=40)
    # every waiter has the change (none was given a read begun before it: that one still had the old set)
    assert [a["peers"] for a in answers] == [["10.9.0.2", "10.9.0.3"]] * WAITERS
    assert len({a["version"] for a in answers}) == 1 and answers[0]["version"] != first["version"]
    # one read for all of them (one more at most, if a waiter's own recheck fell at that very moment);
    # each read its own before: WAITERS reads
    assert 1 <= len(reads) <= 2, reads
    assert cluster_id not in hub.waiters and not any(key[1] == cluster_id for key in hub.last_read)


@pytest.mark.parametrize(("product", "version", "options", "kdc"), [
    ("hadoop", "3.3", {"settings": {"kerberos": True, "ha": False}}, "10.9.0.1"),
    ("hadoop", "3.3", {"settings": {"kerberos": False, "ha": False}}, ""),
    ("static-web", "1.0", {}, ""),
])
def test_only_a_cluster_whose_members_get_kerberos_keys_may_reach_the_kdc(fresh_database, product, version, options,
                                                                             kdc):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    app = build_app(Settings(database_url=fresh_database, internal_token=TOKEN, network_pool="",
                             kdc_address="10.9.0.1"))
    with serve(app) as url:
        cluster_id = httpx.post(f"{url}/clusters", headers=AS_API, timeout=10, json={
            "owner": "alice", "owner_id": "alice", "product": product, "version": version,
            "options": options}).json()["id"]
        answer = httpx.get(f"{url}/internal/clusters/{cluster_id}/peers", headers=AS_API, timeout=10).json()
    app.state.event_hub.stop()
    assert answer["kdc"] == kdc
