"""Spindle as a Mesos framework (pymesos ``Scheduler`` callbacks).

Persisted FrameworkID + long failover timeout: a restarted scheduler re-subscribes as the same
framework and keeps its tasks. On every (re)registration it reconciles: the master answers with the
state of each task it knows and TASK_LOST for the rest, and every terminal state releases what the
task held (its container is removed, its disks wiped and freed). What a member's end means for its
cluster (replace it, fail the cluster) is the orchestrator's decision (``reconcile.py``): the
scheduler only reports, through the task store's notifications, and relaunches when asked.
"""
import copy
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pymesos import Scheduler

from spindle_common.errors import ApiError
from spindle_scheduler.mesos.launcher import Launcher, is_job, new_task_id
from spindle_scheduler.mesos.offers import ParsedOffer, parse_offer
from spindle_scheduler.mesos.releases import Releases
from spindle_scheduler.store import TERMINAL_STATES, TaskStore, pinned, release_pending

log = logging.getLogger("spindle.framework")

# One week: long enough for any scheduler restart or upgrade to keep its tasks.
FAILOVER_TIMEOUT_S = 7 * 24 * 3600.0
# Partition-aware (Mesos >= 1.1): a task on an agent that stopped answering is TASK_UNREACHABLE,
# not TASK_LOST, and may come back; Spindle's orchestrator decides to wait or to replace it.
UNREACHABLE = "TASK_UNREACHABLE"
# Why the master drops a launch that never reached a node (TASK_DROPPED, or TASK_LOST for a framework
# that is not partition-aware): the offer it used was no longer valid.
INVALID_OFFERS = "REASON_INVALID_OFFERS"
RECONCILIATION = "REASON_RECONCILIATION"  # the master's answer to reconcileTasks: what it knows of a task
ROLE = "spindle"
# Offers arrive one agent at a time (each agent's refusal filter ends on its own clock): an offer
# that fits no pending cluster yet is held this long, so a cluster spanning several nodes is placed
# on offers from all of them at once; then it is declined (a Mesos framework may hold offers).
OFFER_HOLD_S = 10.0
# After a REVIVE, placement waits this long for the offers of every node it knows (unless they are
# all held already), so that spread sees every node and not just the first to answer.
REVIVE_GATHER_S = 3.0


def framework_info(framework_id: str | None, user: str = "root", principal: str = "") -> dict[str, Any]:
    info: dict[str, Any] = {
        "user": user, "name": "spindle", "roles": [ROLE], "failover_timeout": FAILOVER_TIMEOUT_S,
        "checkpoint": True, "capabilities": [{"type": "MULTI_ROLE"}, {"type": "PARTITION_AWARE"}],
    }
    if framework_id:
        info["id"] = {"value": framework_id}
    if principal:  # the principal the framework authenticates as (the master checks they agree)
        info["principal"] = principal
    return info


class SpindleFramework(Scheduler):
    def __init__(self, store: TaskStore, launcher: Launcher, release: Callable[[Any], None],
                 refuse_seconds: float = 5.0):
        self.store = store
        self.launcher = launcher
        self.release = release  # frees what a terminal task held (container, disks)
        # What ended tasks owe, recorded with their end and done until disk-service confirms.
        self.releases = Releases(store, release)
        self.refuse_seconds = refuse_seconds
        self.lock = threading.Lock()
        self.reconciled = threading.Event()
        # The latest offer of each node, as it was before this framework used any of it (dry runs).
        self.last_offers: dict[str, ParsedOffer] = {}
        # Offers neither used nor declined yet, by offer id, with when they arrived.
        self.held: dict[str, tuple[ParsedOffer, float]] = {}
        self.offer_hold_s = OFFER_HOLD_S
        self.revive_gather_s = REVIVE_GATHER_S
        self.revived_at: float | None = None
        self.clock: Callable[[], float] = time.monotonic
        # The hostnames of the agents the master counts as active (driver.py asks its operator API),
        # read at each revive: a node whose offer never came yet (its agent just registered, or came
        # back after it was lost and so left last_offers) is gathered like one whose offer was seen.
        self.registered_agents: Callable[[], set[str]] | None = None
        self.expected_nodes: set[str] = set()

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
        driver.reconcileTasks([{"task_id": {"value": t.task_id},
                                **({"agent_id": {"value": t.agent_id}} if t.agent_id else {})}
                               for t in live])
        with self.lock:  # a re-registration must not free the disks a placement under way just held
            try:
                self.launcher.release_stale_holdings([t for t in self.store.in_states("PENDING") if not pinned(t)])
            except Exception:  # disk-service away: raising here would abort the driver (and the process)
                log.exception("freeing the disks pending tasks may hold failed; the sweep frees them later")
        self.reconciled.set()

    # --- offers ------------------------------------------------------------------------------
    def resourceOffers(self, driver, offers) -> None:  # noqa: N802 (pymesos API names)
        with self.lock:
            parsed = [parse_offer(offer) for offer in offers]
            self.last_offers.update({o.hostname: copy.deepcopy(o) for o in parsed})
            now = self.clock()
            self.held.update({o.offer_id: (o, now) for o in parsed})
            self._place_on_held(driver, now)

    def revive(self, driver) -> None:
        """Something new to place (a launch, a job, a relaunch): ask the master for every offer
        (those declined before, refuse_seconds, come back now) and place when they arrive, with the
        offers held. When the held offers are every node's already, no new offer will come: place
        on them now (and the hold timer places on whatever is held a few seconds later anyway)."""
        expected = self.active_agents()  # an HTTP call: not under the lock
        with self.lock:
            self.expected_nodes = expected
            self.revived_at = self.clock()
            if self._every_node_held():
                self._place_on_held(driver, self.revived_at)
        driver.reviveOffers()

    def platform_nodes(self) -> set[str]:
        """The platform's nodes as last seen: the agents the master counted active at the last revive
        (none known: those whose offers came; a lost agent's are dropped)."""
        return set(self.expected_nodes) or set(self.last_offers)

    def active_agents(self) -> set[str]:
        if self.registered_agents is None:
            return set()
        try:
            return self.registered_agents()
        except Exception as exc:  # the master away: gather the nodes seen in offers only
            log.warning("cannot list the master's agents: %s", exc)
            return set()

    def _every_node_held(self) -> bool:
        return {o.hostname for o, _ in self.held.values()} >= set(self.last_offers) | self.expected_nodes

    def expire_held(self, driver) -> None:
        """Every few seconds (driver.py): what is pending is placed on the held offers, and held offers
        past their time are declined, even when no new offer arrives to trigger it."""
        with self.lock:
            if self.held:
                self._place_on_held(driver, self.clock())

    def _place_on_held(self, driver, now: float) -> None:
        """Place what is pending on every held offer; launch what fits, hold the rest while something
        still waits (up to offer_hold_s), decline the others. Under self.lock."""
        pending = [t for t in self.store.in_states("PENDING") if not t.kill_requested]
        usable = [offer for offer, _ in self.held.values()]
        gathering = (self.revived_at is not None and now - self.revived_at < self.revive_gather_s
                     and not self._every_node_held())  # every node's offer may still come: hold
        launches = self._launch(pending, usable) \
            if pending and usable and self.reconciled.is_set() and not gathering else {}
        # Still something to place (what was just placed is LAUNCHING now): hold the rest a while.
        launched = {info["task_id"]["value"] for infos in launches.values() for info in infos}
        waiting = any(t.task_id not in launched for t in pending)
        for offer_id, (_, since) in list(self.held.items()):
            tasks = launches.get(offer_id)
            if tasks:
                driver.launchTasks([{"value": offer_id}], tasks)
            elif waiting and now - since < self.offer_hold_s:
                continue  # held: with the next agents' offers it may complete a placement
            else:
                driver.declineOffer([{"value": offer_id}], {"refuse_seconds": self.refuse_seconds})
            del self.held[offer_id]

    def _launch(self, pending, usable) -> dict[str, list[dict[str, Any]]]:
        """The launcher's launches; none while a service it needs is away (disk-service down): an
        exception here would abort the driver's event thread, and with it the scheduler."""
        try:
            return self.launcher.launch(pending, usable, self.platform_nodes())
        except Exception:
            log.exception("placing %d pending tasks failed; trying again on the next offers", len(pending))
            return {}

    def offerRescinded(self, driver, offer_id) -> None:  # noqa: N802
        log.info("offer %s rescinded", offer_id["value"])
        with self.lock:
            self.last_offers = {h: o for h, o in self.last_offers.items() if o.offer_id != offer_id["value"]}
            self.held.pop(offer_id["value"], None)

    def slaveLost(self, driver, agent_id) -> None:  # noqa: N802
        """An agent is gone (unreachable or removed): its last offer, declined and so never rescinded,
        must not be planned on any more. Its tasks come as their own updates."""
        log.info("agent %s lost", agent_id["value"])
        with self.lock:
            self.last_offers = {h: o for h, o in self.last_offers.items() if o.agent_id != agent_id["value"]}
            self.held = {i: (o, t) for i, (o, t) in self.held.items() if o.agent_id != agent_id["value"]}

    # --- task states ---------------------------------------------------------------------------
    def statusUpdate(self, driver, update) -> None:  # noqa: N802
        task_id, state = update["task_id"]["value"], update["state"]
        task = self.store.get(task_id)
        if task is None:
            log.warning("update %s for unknown task %s: killing it", state, task_id)
            if state not in TERMINAL_STATES:
                driver.killTask({"value": task_id})
            return
        if task.state in TERMINAL_STATES:
            # Ended for Spindle already (e.g. killed or given up while its node was unreachable, and
            # its disks released): a node that comes back must not run it again.
            if state not in TERMINAL_STATES:
                log.warning("task %s, ended as %s, is %s again on %s: killing it", task_id, task.state, state,
                            task.hostname)
                driver.killTask({"value": task_id})
            return
        message = (update.get("message") or "")[:2000]
        if (update.get("reason") == INVALID_OFFERS and task.state == "LAUNCHING" and not task.kill_requested
                and self._retry_dropped(driver, task, message)):
            return
        if state == UNREACHABLE:
            message = f"node {task.hostname or '?'} unreachable: {message or 'its agent stopped answering'}"[:2000]
        if update.get("reason") == RECONCILIATION and state == task.state:
            log.debug("task %s: still %s (reconciliation)", task_id, state)  # keeps its message; wakes no one
        else:
            self.store.set(task_id, state=state, message=message)
            log.info("task %s: %s %s", task_id, state, message)
        if state in TERMINAL_STATES:
            self._release_soon(task)
        elif task.kill_requested:
            self._kill(driver, self.store.get(task_id) or task)
        # pymesos acknowledges the update when this returns (implicit acknowledgements), i.e.
        # only after the new state is persisted (and the orchestrator notified of it).

    def _retry_dropped(self, driver, task, message: str) -> bool:
        """The master dropped a launch before it reached the node: the offer it used had just been
        rescinded (the node's resources changed, e.g. a disk came back from its wipe) or its agent
        left. Nothing ran, so the member is placed again (its disks released first) rather than
        ended; under the offer lock, so a kill of its cluster cannot slip between. False (the
        update then ends the task as usual) if a kill was asked for or its disks cannot be freed."""
        with self.lock:
            try:  # a member on kept disks keeps them: it is placed on them again
                self.launcher.release_disks([] if is_job(task) or pinned(task) else [task.member_id])
            except Exception:
                log.exception("task %s was dropped; releasing its disks failed, so it ends", task.task_id)
                return False
            why = message or "offer no longer valid"
            again = self.store.requeue(task.task_id, new_task_id(task.member_id),
                                       f"placing again: the master dropped the launch ({why})"[:2000])
        if again is None:
            return False
        log.info("task %s dropped by the master (%s): placing it again as %s", task.task_id, message, again.task_id)
        self.revive(driver)
        return True

    def _release_soon(self, task) -> None:
        """Free what an ended task held (its container and disks; its IP is the orchestrator's). Its
        end recorded that it owes this (``releases.py``): tried now without blocking the driver's
        event thread on another release, and by the release worker until disk-service confirms."""
        if not self.releases.settle(task, wait=False):
            self.releases.wakeup.set()

    def relaunch(self, driver, cluster_id: str, member_id: str, launches_seen: int, reason: str):
        """Launch an ended member again as a new task (the orchestrator decided it); its floating
        IP lease is in its request, its disks were released when it ended (or, ``restart: in_place``,
        kept: it is pinned to them on its node, ``TaskStore.relaunch``). A member whose node is
        unreachable is replaced the same way: its old task is killed (the master delivers the kill
        if the node returns) and its disks released first (its node wipes them when it is back,
        before they are offered again). Idempotent."""
        with self.lock:
            old = self.store.get_member(cluster_id, member_id)
            if old is not None and old.state == UNREACHABLE and old.launches == launches_seen:
                self.launcher.release_disks([member_id])  # raises (the caller retries) rather than leak
                driver.killTask({"value": old.task_id})
            elif old is not None and old.release_owed and old.launches == launches_seen \
                    and not self.releases.settle(old):
                # Its new task will hold disks under the same owner name: the old release goes first.
                raise release_pending(self.store.get(old.task_id) or old)
            task = self.store.relaunch(cluster_id, member_id, new_task_id(member_id), launches_seen,
                                       f"relaunching: {reason}"[:2000])
        if task is not None and task.state == "PENDING":
            self.revive(driver)
        return task

    def kill_cluster(self, driver, cluster_id: str) -> None:
        """Kill every task of a cluster, its job drivers' too; tasks never launched just end (under
        the offer lock, so a kill cannot race a launch of the same task). Members that kept their
        disks when stopped release them now."""
        with self.lock:
            for task in self.store.request_kill(cluster_id):
                self._end(driver, task)
        self.releases.wakeup.set()

    def stop_cluster(self, driver, cluster_id: str) -> None:
        """Kill the cluster's members keeping their disks (their release removes the container
        only), and its job drivers; like ``kill_cluster`` otherwise."""
        with self.lock:
            for task in self.store.request_stop(cluster_id):
                self._end(driver, task)

    def start_cluster(self, driver, cluster_id: str) -> list:
        """Launch the members of a stopped cluster again, each on its kept disks' node and disks
        (``store.start``); RELEASE_PENDING (503) while a stopped container is still being removed."""
        with self.lock:
            tasks = self.store.start(cluster_id, new_task_id)
        if any(t.state == "PENDING" for t in tasks):
            self.revive(driver)
        return tasks

    def hand_over(self, cluster_id: str, owners: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
        """Give the kept disks of the cluster's ended members (member id → new owner, e.g. a dataset)
        to their new owners with their data, in one disk-service call; the members keep nothing
        after it. Returns new owner → its disks. A repeat moves nothing more."""
        tasks = {t.member_id: t for t in self.store.by_cluster(cluster_id)}
        unknown = sorted(m for m in owners if m not in tasks or tasks[m].state not in TERMINAL_STATES)
        if unknown:
            raise ApiError(409, "TASK_LIVE", f"members {', '.join(unknown)} have not ended (or do not exist)",
                           {"members": unknown})
        with self.lock:
            moved = self.launcher.disks.transfer([{"from_owner": m, "to_owner": o} for m, o in sorted(owners.items())])
            self.store.handed_over(list(owners))
        return moved

    def kill_member(self, driver, cluster_id: str, member_id: str):
        """Kill one task of a cluster (a job's driver: ``job-<job id>``), like ``kill_cluster``;
        None if the cluster has no such task."""
        with self.lock:
            task = self.store.request_kill_member(cluster_id, member_id)
            if task is None:
                return None
            self._end(driver, task)
        self.releases.wakeup.set()  # an ended member that kept its disks owes their release now
        return self.store.get(task.task_id)

    def _end(self, driver, task) -> None:
        if task.state == "PENDING":
            self.store.set(task.task_id, state="TASK_KILLED", message="killed before launch")
            self.releases.wakeup.set()  # it owes a release (of nothing, unless a crash left a hold)
        elif task.state not in TERMINAL_STATES:
            self._kill(driver, task)

    def _kill(self, driver, task) -> None:
        """Kill a task; one on an unreachable node cannot answer, so it ends for Spindle now
        (TASK_LOST, its disks released and wiped by its node once it is back) and the master
        delivers the kill if the node returns."""
        driver.killTask({"value": task.task_id})
        if task.state == UNREACHABLE:
            self.store.set(task.task_id, state="TASK_LOST",
                           message=f"killed while node {task.hostname or '?'} is unreachable")
            self._release_soon(task)

    def error(self, driver, message) -> None:
        log.error("Mesos error: %s", message)
