"""Spindle as a Mesos framework (pymesos ``Scheduler`` callbacks).

Persisted FrameworkID + long failover timeout: a restarted scheduler re-subscribes as the same
framework and keeps its tasks. On every (re)registration it reconciles: the master answers with the
state of each task it knows and TASK_LOST for the rest, and every terminal state releases what the
task held (disks are wiped, IPs freed, containers removed).
"""
import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pymesos import Scheduler

from spindle_scheduler.mesos.launcher import Launcher, new_task_id
from spindle_scheduler.mesos.offers import ParsedOffer, parse_offer
from spindle_scheduler.store import TERMINAL_STATES, TaskStore

log = logging.getLogger("spindle.framework")

# One week: long enough for any scheduler restart or upgrade to keep its tasks.
FAILOVER_TIMEOUT_S = 7 * 24 * 3600.0
ROLE = "spindle"


def framework_info(framework_id: str | None, user: str = "root") -> dict[str, Any]:
    info: dict[str, Any] = {
        "user": user, "name": "spindle", "roles": [ROLE], "failover_timeout": FAILOVER_TIMEOUT_S,
        "checkpoint": True, "capabilities": [{"type": "MULTI_ROLE"}],
    }
    if framework_id:
        info["id"] = {"value": framework_id}
    return info


# How often one member is replaced after dying while running before it is left to fail.
MAX_REPLACEMENTS = 3
# Ends that mean the member died (not that it finished or was killed on purpose).
DIED = frozenset({"TASK_FAILED", "TASK_LOST", "TASK_ERROR", "TASK_GONE", "TASK_DROPPED"})


def replaceable(task, state: str) -> bool:
    """A member whose product asks for replacement, that was running and died, not killed by us."""
    return (state in DIED and task.state == "TASK_RUNNING" and not task.kill_requested
            and task.request.get("restart") == "replace"
            and task.request.get("replacements", 0) < MAX_REPLACEMENTS)


class SpindleFramework(Scheduler):
    def __init__(self, store: TaskStore, launcher: Launcher, release: Callable[[Any], None],
                 refuse_seconds: float = 5.0):
        self.store = store
        self.launcher = launcher
        self.release = release  # frees what a terminal task held (disks, IP, container)
        self.refuse_seconds = refuse_seconds
        self.release_retry_s = 1.0  # first retry delay when freeing an ended task's resources fails
        self.lock = threading.Lock()
        self.reconciled = threading.Event()
        # The latest offer of each node, as it was before this framework used any of it (dry runs).
        self.last_offers: dict[str, ParsedOffer] = {}

    # --- registration and reconciliation ---------------------------------------------------
    def registered(self, driver, framework_id, master_info) -> None:
        self.store.save_framework_id(framework_id["value"])
        log.info("registered as framework %s", framework_id["value"])
        self._reconcile(driver)

    def reregistered(self, driver, master_info) -> None:
        self._reconcile(driver)

    def _reconcile(self, driver) -> None:
        """Ask the master about every task we think is live; unknown ones come back TASK_LOST."""
        live = self.store.live()
        driver.reconcileTasks([{"task_id": {"value": t.task_id}, **({"agent_id": {"value": t.agent_id}} if t.agent_id else {})}
                               for t in live])
        self.launcher.release_stale_holdings(self.store.in_states("PENDING"))
        self.reconciled.set()

    # --- offers ------------------------------------------------------------------------------
    def resourceOffers(self, driver, offers) -> None:  # noqa: N802 (pymesos API names)
        with self.lock:
            parsed = [parse_offer(offer) for offer in offers]
            self.last_offers.update({o.hostname: copy.deepcopy(o) for o in parsed})
            pending = [t for t in self.store.in_states("PENDING") if not t.kill_requested]
            launches = self.launcher.launch(pending, parsed) if pending and self.reconciled.is_set() else {}
            for offer in parsed:
                tasks = launches.get(offer.offer_id)
                if tasks:
                    driver.launchTasks([{"value": offer.offer_id}], tasks)
                else:
                    driver.declineOffer([{"value": offer.offer_id}], {"refuse_seconds": self.refuse_seconds})

    def offerRescinded(self, driver, offer_id) -> None:  # noqa: N802
        log.info("offer %s rescinded", offer_id["value"])
        self.last_offers = {h: o for h, o in self.last_offers.items() if o.offer_id != offer_id["value"]}

    # --- task states ---------------------------------------------------------------------------
    def statusUpdate(self, driver, update) -> None:  # noqa: N802
        task_id, state = update["task_id"]["value"], update["state"]
        task = self.store.get(task_id)
        if task is None:
            log.warning("update %s for unknown task %s: killing it", state, task_id)
            if state not in TERMINAL_STATES:
                driver.killTask({"value": task_id})
            return
        message = (update.get("message") or "")[:2000]
        if replaceable(task, state):
            self._replace(driver, task, state, message)
            return
        self.store.set(task_id, state=state, message=message)
        log.info("task %s: %s %s", task_id, state, update.get("message", ""))
        if state in TERMINAL_STATES:
            self._release_soon(task)
        elif task.kill_requested:
            driver.killTask({"value": task_id})
        # pymesos acknowledges the update when this returns (implicit acknowledgements), i.e.
        # only after the new state is persisted.

    def _replace(self, driver, task, state: str, message: str) -> None:
        """A running member died: the same member goes back to PENDING as a new Mesos task (in
        one write, so no one sees it end); its disks are wiped and freed, its floating IP stays
        held for the replacement, which the next fitting offer places on fresh disks."""
        replacement = new_task_id(task.member_id)
        count = task.request.get("replacements", 0) + 1
        log.warning("task %s: %s (%s); replacing it as %s (replacement %d)", task.task_id, state, message,
                    replacement, count)
        failure = f"{state}: {message}"[:1000]
        self.store.replace(task.task_id, replacement, {**task.request, "replacements": count, "last_failure": failure},
                           f"replacing after {failure}")
        self._release_soon(task, keep_ip=True)
        driver.reviveOffers()

    def _release_soon(self, task, attempts: int = 6, keep_ip: bool = False) -> None:
        """Free what an ended task held; if a service is briefly away, retry in the background
        (1, 2, 4 … s) rather than fail the driver's event thread, which would stop the framework."""
        try:
            self.release(task, keep_ip)
            return
        except Exception:
            log.exception("releasing %s failed; retrying in the background", task.task_id)

        def retry() -> None:
            for attempt in range(attempts):
                time.sleep(self.release_retry_s * 2 ** attempt)
                try:
                    self.release(task, keep_ip)
                    return
                except Exception:
                    log.exception("releasing %s failed (attempt %d of %d)", task.task_id, attempt + 1, attempts)
            log.error("giving up releasing %s: its disks and IP stay held (release them with disk-service and "
                      "network-service's /allocations/release)", task.task_id)

        threading.Thread(target=retry, name=f"release-{task.task_id}", daemon=True).start()

    def kill_cluster(self, driver, cluster_id: str) -> None:
        """Kill every task of a cluster; tasks never launched just end (under the offer lock, so
        a kill cannot race a launch of the same task)."""
        with self.lock:
            for task in self.store.request_kill(cluster_id):
                if task.state == "PENDING":
                    self.store.set(task.task_id, state="TASK_KILLED", message="killed before launch")
                elif task.state not in TERMINAL_STATES:
                    driver.killTask({"value": task.task_id})

    def error(self, driver, message) -> None:
        log.error("Mesos error: %s", message)
