"""The orchestrator's worker loop: advance every cluster that has work left, forever.

Restarting the orchestrator is the reconciler for its own crashes: the loop picks every
non-final cluster up again from its committed state. A sweep (at start, then every
``sweep_interval_s``) kills tasks the scheduler still runs for clusters destroyed or unknown here.
"""
import logging
import threading
import time
from contextlib import contextmanager

from fastapi import FastAPI
from sqlalchemy import or_, select

from spindle_common.catalog import load_catalog
from spindle_common.clients import DiskClient, NetworkClient, SchedulerClient
from spindle_common.consul import ConsulClient
from spindle_common.db import session_factory
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.lifecycle import Lifecycle
from spindle_orchestrator.models import Cluster
from spindle_orchestrator.states import ACTIVE_STATES, FAILED

log = logging.getLogger("spindle.worker")


def build_lifecycle(settings: Settings) -> Lifecycle:
    return Lifecycle(
        session_factory(settings.database_url), settings, load_catalog(settings.catalog_root).get,
        SchedulerClient(settings.scheduler_url, settings.internal_token, actor="orchestrator"),
        NetworkClient(settings.network_service_url, settings.internal_token, actor="orchestrator"),
        ConsulClient(settings.consul_url),
        DiskClient(settings.disk_service_url, settings.internal_token, actor="orchestrator"),
    )


def clusters_with_work(lifecycle: Lifecycle) -> list[str]:
    with lifecycle.sessions() as session:
        return list(session.scalars(select(Cluster.id).where(or_(
            Cluster.state.in_(ACTIVE_STATES), (Cluster.state == FAILED) & ~Cluster.cleaned_up,
            Cluster.delete_requested & Cluster.state.not_in(("DESTROYED",)))).order_by(Cluster.created_at)))


def run_loop(lifecycle: Lifecycle, stop: threading.Event) -> None:
    next_sweep = time.monotonic()  # first right after a start: that is when a crash may have left orphans
    while not stop.is_set():
        if time.monotonic() >= next_sweep:
            next_sweep = time.monotonic() + lifecycle.settings.sweep_interval_s
            try:
                lifecycle.sweep()
            except Exception:
                log.exception("sweeping for orphaned tasks failed; retrying next round")
        try:
            lifecycle.jobs.poll()
            for cluster_id in clusters_with_work(lifecycle):
                try:
                    lifecycle.advance(cluster_id)
                except Exception:  # one cluster's trouble (e.g. a service down) must not stop the others
                    log.exception("advancing cluster %s failed; retrying next round", cluster_id)
        except Exception:
            log.exception("listing clusters failed; retrying")
        stop.wait(lifecycle.settings.poll_interval_s)


@contextmanager
def running_worker(app: FastAPI):
    """Lifespan part: the worker thread runs for as long as the service does."""
    stop = threading.Event()
    thread = threading.Thread(target=run_loop, args=(build_lifecycle(app.state.settings), stop), name="worker",
                              daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)
