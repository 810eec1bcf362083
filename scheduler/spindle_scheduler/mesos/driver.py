"""Running the framework inside the scheduler process: build its parts, start the pymesos driver,
and stop with failover (never tearing the framework down on a normal stop)."""
import logging
import threading
from contextlib import contextmanager
from functools import partial

import docker
import httpx
from fastapi import FastAPI
from pymesos import MesosSchedulerDriver

from spindle_common.clients import DiskClient
from spindle_common.db import session_factory
from spindle_common.tls import default_tls
from spindle_executor.container import remove
from spindle_scheduler.core.config import Settings
from spindle_scheduler.mesos.framework import SpindleFramework, framework_info
from spindle_scheduler.mesos.launcher import Launcher
from spindle_scheduler.mesos.placing import place_cluster
from spindle_scheduler.mesos.sweep import Sweeper
from spindle_scheduler.store import TaskStore

log = logging.getLogger("spindle.driver")


def build_framework(settings: Settings) -> SpindleFramework:
    store = TaskStore(session_factory(settings.database_url))
    disks = DiskClient(settings.disk_service_url, settings.internal_token, actor="scheduler",
                       identity_key=settings.identity_key)
    # Placement counts the cluster's members already running (a replacement keeps away from them).
    launcher = Launcher(store, disks, partial(place_cluster, store=store), settings.executor_command)

    def release(task) -> None:
        # Container first: a disk is wiped as soon as it is released, and a container still holding
        # its mount (its executor was killed) would make the wipe fail.
        if settings.reap_local_containers:
            client = docker.from_env()
            try:
                remove(client, task.task_id)
            finally:
                client.close()
        if not task.keep_disks:  # a stopped member keeps its disks, data and all
            launcher.release_disks([task.member_id])

    framework = SpindleFramework(store, launcher, release, settings.refuse_seconds)
    framework.releases.max_retry_s = settings.release_retry_max_s
    return framework


@contextmanager
def running_framework(app: FastAPI):
    """Lifespan part: subscribe to the master (if configured) for as long as the service runs."""
    settings: Settings = app.state.settings
    if not settings.mesos_master:
        app.state.framework = app.state.driver = None
        yield
        return
    framework = build_framework(settings)
    credential = {"principal": settings.mesos_principal, "secret": settings.mesos_secret} \
        if settings.mesos_principal else {}
    info = framework_info(framework.store.framework_id(), principal=settings.mesos_principal)
    driver = MesosSchedulerDriver(framework, info, settings.mesos_master, use_addict=True,
                                  implicit_acknowledgements=True, **credential)
    framework.registered_agents = partial(registered_agents, settings.mesos_master,
                                          (settings.mesos_principal, settings.mesos_secret)
                                          if settings.mesos_principal else None)
    driver.start()
    app.state.framework, app.state.driver = framework, driver
    app.state.sweeper = sweeper = Sweeper(framework, framework.launcher.disks, settings.disk_sweep_grace_s)
    stop = threading.Event()
    threading.Thread(target=_expire_held_offers, args=(framework, driver, stop), name="offer-holds",
                     daemon=True).start()
    # Releases owed by tasks that ended before this process started are resumed at once.
    threading.Thread(target=framework.releases.run, args=(stop,), name="releases", daemon=True).start()
    if settings.disk_sweep_interval_s > 0:
        threading.Thread(target=_sweep, args=(sweeper, settings.disk_sweep_interval_s, stop), name="sweep",
                         daemon=True).start()
    try:
        yield
    finally:
        stop.set()
        driver.stop(failover=True)  # keep the framework (and its tasks) registered for our return


def registered_agents(master: str, credential: tuple[str, str] | None, timeout_s: float = 2.0) -> set[str]:
    """The hostnames of the agents master ``host:port`` counts as active (operator API GET_AGENTS)."""
    answer = httpx.post(f"http://{master}/api/v1", json={"type": "GET_AGENTS"}, auth=credential,
                        headers={"Accept": "application/json"}, timeout=timeout_s,
                        verify=default_tls()).raise_for_status().json()
    return {a["agent_info"]["hostname"] for a in answer["get_agents"]["agents"] if a.get("active")}


def _expire_held_offers(framework: SpindleFramework, driver, stop: threading.Event) -> None:
    while not stop.wait(framework.offer_hold_s / 2):
        try:
            framework.expire_held(driver)
        except Exception:  # a background loop has no caller to raise to
            log.exception("expiring held offers failed")


def _sweep(sweeper: Sweeper, interval_s: float, stop: threading.Event) -> None:
    while not stop.wait(interval_s):
        try:
            sweeper.run()
        except Exception:  # disk-service away: the next round looks again
            log.exception("sweeping disk holds failed")
