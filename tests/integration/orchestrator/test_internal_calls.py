"""How much internal traffic one launch costs, counted on the real platform: a static-web cluster
of 3 members makes at most one call per service per reconcile round, the members' IPs are held in
one network-service call and their disks in one disk-service call, and once the cluster is RUNNING
nothing asks about it any more until something about it changes."""
import re
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx
import pytest

from spindle_common import migrations
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.worker import running_worker
from tests.conftest import STATE_DIR
from tests.integration.orchestrator.test_cluster_lifecycle import wait_state
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.internal import internal_headers
from tests.support.live_server import serve

ACCESS = re.compile(r'"(?P<method>[A-Z]+) (?P<path>[^ ?]+)')


class CallLog:
    """Every call the orchestrator's clients make, by the reconcile round it was made in."""

    def __init__(self):
        self.lock = threading.Lock()
        self.current = threading.local()
        self.calls: dict[int, Counter] = defaultdict(Counter)
        self.paths: list[tuple[str, str]] = []

    def hook(self, service: str):
        def record(request: httpx.Request) -> None:
            with self.lock:
                self.calls[getattr(self.current, "round", 0)][service] += 1
                announce = b'"healthy"' in (request.content or b"")  # names made resolvable once healthy
                self.paths.append((service, f"{request.method} {request.url.path}{' healthy' if announce else ''}"))
        return record


def disk_service_calls(log: Path, since: int) -> list[str]:
    lines = log.read_text(errors="replace")[since:].splitlines()
    return [f"{m['method']} {m['path']}" for m in map(ACCESS.search, lines) if m and "/health" not in m["path"]]


def settled_rounds(worker, still_s: float = 1.5, timeout: float = 30) -> int:
    """The worker's rounds once it has run none for ``still_s`` seconds."""
    deadline = time.monotonic() + timeout
    last, since = worker.rounds, time.monotonic()
    while time.monotonic() - since < still_s:
        assert time.monotonic() < deadline, f"the worker kept running rounds ({worker.rounds})"
        time.sleep(0.1)
        if worker.rounds != last:
            last, since = worker.rounds, time.monotonic()
    return last


@pytest.fixture
def counted_orchestrator(fresh_database, platform_env):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    settings = Settings(database_url=fresh_database, internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                        consul_url=platform_env["SPINDLE_CONSUL_URL"],
                        scheduler_database_url=platform_env["SPINDLE_DATABASE_URL"])
    app = build_app(settings)
    calls = CallLog()
    with running_worker(app), serve(app) as url:
        worker = app.state.worker
        lifecycle = worker.lifecycle
        for service, client in (("scheduler", lifecycle.scheduler), ("network-service", lifecycle.network),
                                ("consul", lifecycle.consul)):
            client._http.event_hooks["request"].append(calls.hook(service))
        advance = lifecycle.advance

        def counted_advance(cluster_id: str) -> bool:
            calls.current.round = worker.rounds
            try:
                return advance(cluster_id)
            finally:
                calls.current.round = 0

        lifecycle.advance = counted_advance
        yield url, internal_headers(settings.internal_token, "api-server", "service"), worker, calls


def test_a_launch_makes_one_call_per_service_per_step_and_nothing_polls_a_running_cluster(
        counted_orchestrator, platform_env, capsys):
    url, headers, worker, calls = counted_orchestrator
    disk_log = STATE_DIR / "log" / "disk-service.log"
    log_start = disk_log.stat().st_size
    with httpx.Client(base_url=url, timeout=30) as http:
        cluster_id = http.post("/clusters", headers=headers, json={
            "owner": "counter", "owner_id": "counter", "product": "static-web", "version": "1.0",
            "options": {"roles": {"server": {"count": 3}}}}).json()["id"]
        cluster = wait_state(http, headers, cluster_id, ("RUNNING", "FAILED"))
        assert cluster["state"] == "RUNNING", cluster
        try:
            launch_rounds = dict(calls.calls)
            assert launch_rounds, "the launch made calls"
            for round_id, per_service in launch_rounds.items():
                assert max(per_service.values()) <= 1, (round_id, per_service, calls.paths)
            ip_calls = [p for s, p in calls.paths if s == "network-service" and p.startswith("POST /allocations")]
            # all 3 members' IPs held in one call; their names made resolvable in one call once healthy
            assert ip_calls == ["POST /allocations/batch", "POST /allocations/batch healthy"], calls.paths
            disk_calls = disk_service_calls(disk_log, log_start)
            assert disk_calls.count("POST /allocations/batch") == 1, disk_calls  # all 3 members' disks
            assert "POST /allocations" not in disk_calls, disk_calls
            with capsys.disabled():  # the counts belong in the test log (CI)
                print(f"\nlaunch of 3 members: {len(launch_rounds)} reconcile rounds, calls "
                      f"{sum(sum(c.values()) for c in launch_rounds.values())} "
                      f"({dict(sum(launch_rounds.values(), Counter()))}); disk-service: {Counter(disk_calls)}")

            # RUNNING and nothing changes: no round, no call, for a while. (First the launch's own last
            # wake-ups: a task's change notified while a round was already reading it wakes the worker
            # once more, and that round finds nothing to do; CI run 9 counted one such.)
            rounds, made = settled_rounds(worker), len(calls.paths)
            time.sleep(5)
            assert (worker.rounds, len(calls.paths)) == (rounds, made), calls.paths[made:]
        finally:
            http.delete(f"/clusters/{cluster_id}", headers=headers)
            cluster = wait_state(http, headers, cluster_id, ("DESTROYED",))
    releases = [p for s, p in calls.paths if s == "network-service" and "release" in p]
    assert releases == ["POST /allocations/release"], calls.paths  # every member's IP back in one call
    assert_nothing_left(platform_env, cluster)
