"""The framework outlives disk-service being away: what it would ask of it at (re)registration or
on offers fails, is logged, and is tried again later; the driver's event thread (whose exception
would abort the driver, and with it the scheduler) never sees it."""
from types import SimpleNamespace

from spindle_common.errors import ApiError
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.mesos.offers import ParsedOffer

DOWN = ApiError(503, "SERVICE_UNAVAILABLE", "http://127.0.0.1:8083 is unreachable")


def fail(*_args, **_kwargs):
    raise DOWN


class Driver:
    def __init__(self):
        self.reconciled, self.declined, self.launched = [], [], []

    def reconcileTasks(self, tasks):  # noqa: N802 (pymesos API names)
        self.reconciled.append(tasks)

    def declineOffer(self, offer_ids, filters=None):  # noqa: N802
        self.declined.extend(o["value"] for o in offer_ids)

    def launchTasks(self, offer_ids, tasks):  # noqa: N802
        self.launched.append(tasks)


def pending_task() -> SimpleNamespace:
    return SimpleNamespace(task_id="m0.a", member_id="m0", cluster_id="c1", kill_requested=False, request={})


def test_a_reregistration_while_disk_service_is_down_still_reconciles():
    store = SimpleNamespace(live=lambda: [], in_states=lambda *states: [pending_task()])
    fw = SpindleFramework(store, SimpleNamespace(release_stale_holdings=fail), release=None)
    driver = Driver()
    fw.reregistered(driver, {})  # does not raise
    assert driver.reconciled == [[]] and fw.reconciled.is_set()


def test_offers_while_disk_service_is_down_launch_nothing_and_are_declined():
    store = SimpleNamespace(in_states=lambda *states: [pending_task()])
    fw = SpindleFramework(store, SimpleNamespace(launch=fail), release=None)
    fw.reconciled.set()
    fw.offer_hold_s = 0.0  # held offers are declined at once when nothing can be placed
    driver = Driver()
    fw.resourceOffers(driver, [])  # nothing offered: nothing to place
    fw.held = {"o1": (ParsedOffer("o1", "A-S1", "n1"), 0.0)}
    fw.last_offers = {"n1": ParsedOffer("o1", "A-S1", "n1")}
    fw.clock = lambda: 100.0
    fw.expire_held(driver)  # does not raise
    assert driver.launched == [] and driver.declined == ["o1"] and fw.held == {}
