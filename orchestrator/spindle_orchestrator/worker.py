"""The orchestrator's worker: reconcile a cluster when something about it changes, never on a timer
of its own.

It hears of changes by PostgreSQL notifications: the scheduler's ``spindle_tasks`` (a task of the
cluster changed: a member's or a job driver's) and this service's ``spindle_clusters`` (created,
deletion asked, a job submitted). It also wakes when the earliest deadline of an unsettled cluster
passes, or a job's time is up. Whenever the
listener (re)connects — at start, and after losing PostgreSQL — every cluster with work left is
reconciled once, so nothing that happened while it was away is missed. A sweep (at start, then
every ``sweep_interval_s``) kills tasks the scheduler still runs for clusters destroyed or unknown
here. A RUNNING cluster costs nothing until one of its tasks changes.
"""
import logging
import queue
import threading
import time
from contextlib import contextmanager

from fastapi import FastAPI
from sqlalchemy import or_, select

from spindle_common.catalog import load_catalog
from spindle_common.clients import NetworkClient, SchedulerClient
from spindle_common.consul import ConsulClient
from spindle_common.contracts import ClusterState
from spindle_common.db import session_factory
from spindle_common.notify import CLUSTERS, TASKS, Listener
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.lifecycle import Lifecycle
from spindle_orchestrator.models import Cluster

log = logging.getLogger("spindle.worker")
EVERYTHING = "*"  # a wake-up that means: reconcile every cluster with work left
# Rounds one wake-up may run for one cluster while each moves it to another state.
MAX_ROUNDS = 8


def build_lifecycle(settings: Settings) -> Lifecycle:
    return Lifecycle(
        session_factory(settings.database_url), settings, load_catalog(settings.catalog_root).get,
        SchedulerClient(settings.scheduler_url, settings.internal_token, actor="orchestrator",
                        identity_key=settings.identity_key),
        NetworkClient(settings.network_service_url, settings.internal_token, actor="orchestrator",
                      identity_key=settings.identity_key),
        ConsulClient(settings.consul_url),
    )


def clusters_with_work(lifecycle: Lifecycle) -> list[str]:
    """Every cluster not settled for good (RUNNING ones too: after a restart, look at each once)."""
    with lifecycle.sessions() as session:
        return list(session.scalars(select(Cluster.id).where(or_(
            Cluster.state.not_in((ClusterState.FAILED.value, ClusterState.DESTROYED.value)),
            (Cluster.state == ClusterState.FAILED.value) & ~Cluster.cleaned_up,
            Cluster.delete_requested & (Cluster.state != ClusterState.DESTROYED.value))).order_by(Cluster.created_at)))


class Worker:
    def __init__(self, lifecycle: Lifecycle):
        self.lifecycle = lifecycle
        self.wakeups: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.rounds = 0  # reconcile rounds run (tests read it)
        self.failing: dict[str, float] = {}  # cluster id → when to try again after a failed round
        lifecycle.recheck = self.wake_after

    def wake(self, cluster_id: str) -> None:
        self.wakeups.put(cluster_id)

    def wake_after(self, cluster_id: str, seconds: float) -> None:
        timer = threading.Timer(seconds, self.wake, (cluster_id,))
        timer.daemon = True
        timer.start()

    def _due(self, timeout: float) -> set[str]:
        """The clusters woken within ``timeout`` s, all wake-ups that came together, deduplicated."""
        try:
            due = {self.wakeups.get(timeout=timeout)}
        except queue.Empty:
            return set()
        while True:
            try:
                due.add(self.wakeups.get_nowait())
            except queue.Empty:
                return due

    def advance(self, cluster_id: str) -> None:
        """Rounds for one cluster while each moves it on (at most MAX_ROUNDS); a failed round is
        tried again after 1 s."""
        for _ in range(MAX_ROUNDS):
            self.rounds += 1
            try:
                moved = self.lifecycle.advance(cluster_id)
            except Exception:  # one cluster's trouble (e.g. a service down) must not stop the others
                log.exception("reconciling cluster %s failed; retrying in 1 s", cluster_id)
                self.failing[cluster_id] = time.monotonic() + 1.0
                self.wake_after(cluster_id, 1.0)
                return
            self.failing.pop(cluster_id, None)
            if not moved:
                return

    def run(self, stop: threading.Event) -> None:
        settings = self.lifecycle.settings
        next_sweep = time.monotonic()  # first right after a start: that is when a crash may have left orphans
        while not stop.is_set():
            if time.monotonic() >= next_sweep:
                next_sweep = time.monotonic() + settings.sweep_interval_s
                try:
                    self.lifecycle.sweep()
                except Exception:
                    log.exception("sweeping for orphaned tasks failed; retrying next round")
            try:
                deadline = self.lifecycle.next_deadline()
                job_deadline = self.lifecycle.jobs.next_deadline()  # a job's time is up: its cluster decides
                if job_deadline is not None:
                    deadline = job_deadline if deadline is None else min(deadline, job_deadline)
            except Exception:
                log.exception("reading deadlines failed")
                deadline = 1.0
            wait = next_sweep - time.monotonic() if deadline is None else min(deadline, next_sweep - time.monotonic())
            due = self._due(max(0.0, wait))
            try:
                now = time.monotonic()  # a deadline passed: those clusters decide now (unless failing)
                due |= {c for c in self.lifecycle.expired() if self.failing.get(c, 0) <= now}
                due |= set(self.lifecycle.jobs.expired())
                if not due:
                    continue
                ids = clusters_with_work(self.lifecycle) if EVERYTHING in due else sorted(due)
            except Exception:
                log.exception("listing clusters failed; retrying")
                self.wake(EVERYTHING)
                stop.wait(1.0)
                continue
            for cluster_id in ids:
                self.advance(cluster_id)


@contextmanager
def running_worker(app: FastAPI):
    """Lifespan part: the listener and the worker thread run for as long as the service does."""
    settings: Settings = app.state.settings
    worker = Worker(build_lifecycle(settings))
    stop = threading.Event()
    tasks_db = settings.scheduler_database_url or settings.database_url
    channels = {settings.database_url: [CLUSTERS]}
    channels.setdefault(tasks_db, []).append(TASKS)
    listeners = [Listener(url, names, lambda _channel, cluster_id: worker.wake(cluster_id),
                          on_connect=lambda: worker.wake(EVERYTHING), name=f"listener-{'-'.join(names)}").start()
                 for url, names in channels.items()]
    thread = threading.Thread(target=worker.run, args=(stop,), name="worker", daemon=True)
    thread.start()
    app.state.worker = worker
    try:
        yield
    finally:
        stop.set()
        worker.wake("")  # let it see the stop at once
        for listener in listeners:
            listener.stop()
        thread.join(timeout=10)
