"""Offers from several agents arrive one agent at a time; an offer that fits no pending cluster yet
is held (up to OFFER_HOLD_S) so a cluster spanning nodes is placed on all of them at once."""
from types import SimpleNamespace

from spindle_scheduler.mesos.framework import SpindleFramework


def offer(agent: str) -> dict:
    return {"id": {"value": f"o-{agent}"}, "agent_id": {"value": f"A-{agent}"}, "hostname": agent,
            "resources": [{"name": "cpus", "type": "SCALAR", "scalar": {"value": 2}},
                          {"name": "mem", "type": "SCALAR", "scalar": {"value": 4096}}]}


def pending_task() -> SimpleNamespace:
    return SimpleNamespace(task_id="t1", kill_requested=False)


class Store:
    def __init__(self, pending: list):
        self.pending = pending

    def in_states(self, *states):
        return list(self.pending) if "PENDING" in states else []


class Launcher:
    """Places the one pending cluster only when offers of ``needs`` (hostnames) are all there."""

    def __init__(self, store: Store, needs: set[str]):
        self.store, self.needs, self.seen = store, needs, []

    def launch(self, pending, offers, nodes=()):
        hosts = {o.hostname: o for o in offers}
        self.seen.append(sorted(hosts))
        if not pending or not self.needs <= set(hosts):
            return {}
        placed, self.store.pending = self.store.pending, []  # placed: LAUNCHING
        return {hosts[h].offer_id: [{"name": f"task-on-{h}", "task_id": {"value": task.task_id}}]
                for h, task in zip(sorted(self.needs), placed * len(self.needs), strict=False)}


class Driver:
    def __init__(self):
        self.launched, self.declined = [], []

    def launchTasks(self, offer_ids, tasks):  # noqa: N802
        self.launched.append((offer_ids[0]["value"], [t["name"] for t in tasks]))

    def declineOffer(self, offer_ids, filters):  # noqa: N802
        self.declined.append(offer_ids[0]["value"])


def framework(pending: list, needs: set[str]) -> tuple[SpindleFramework, Driver, Launcher]:
    store = Store(pending)
    launcher = Launcher(store, needs)
    fw = SpindleFramework(store=store, launcher=launcher, release=None)
    fw.reconciled.set()
    now = [0.0]
    fw.clock = lambda: now[0]
    fw.now = now
    return fw, Driver(), launcher


def test_a_cluster_over_two_nodes_is_placed_when_the_second_offer_arrives():
    fw, driver, launcher = framework([pending_task()], {"n1", "n2"})
    fw.resourceOffers(driver, [offer("n1")])
    assert driver.launched == [] and driver.declined == [] and list(fw.held) == ["o-n1"]
    fw.now[0] = 3.0
    fw.resourceOffers(driver, [offer("n2")])
    assert launcher.seen == [["n1"], ["n1", "n2"]]
    assert driver.launched == [("o-n1", ["task-on-n1"]), ("o-n2", ["task-on-n2"])] and fw.held == {}


def test_with_nothing_to_place_offers_are_declined_at_once():
    fw, driver, _ = framework([], set())
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])
    assert driver.declined == ["o-n1", "o-n2"] and fw.held == {}


def test_an_offer_held_past_the_hold_time_is_declined():
    fw, driver, _ = framework([pending_task()], {"n1", "n9"})
    fw.resourceOffers(driver, [offer("n1")])
    fw.now[0] = fw.offer_hold_s + 1
    fw.resourceOffers(driver, [offer("n2")])
    assert driver.declined == ["o-n1"] and list(fw.held) == ["o-n2"] and driver.launched == []


def test_a_rescinded_or_lost_agents_held_offer_is_dropped():
    fw, driver, _ = framework([pending_task()], {"n1", "n9"})
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])
    fw.offerRescinded(driver, {"value": "o-n1"})
    fw.slaveLost(driver, {"value": "A-n2"})
    assert fw.held == {} and fw.last_offers == {}


def test_a_launch_is_placed_on_the_offers_held_now_then_revives_the_rest():
    # A cluster needing n1 and n9 holds n1's offer; a new one needing only n1 arrives (no new offer
    # will: the framework holds the node's only offer) and is placed at once.
    fw, driver, launcher = framework([pending_task()], {"n1", "n9"})
    driver.revived = 0

    def revive():
        driver.revived += 1
    driver.reviveOffers = revive
    fw.resourceOffers(driver, [offer("n1")])
    assert list(fw.held) == ["o-n1"]
    launcher.needs = {"n1"}
    fw.revive(driver)
    assert driver.launched == [("o-n1", ["task-on-n1"])] and fw.held == {} and driver.revived == 1


def test_held_offers_expire_without_any_new_offer():
    fw, driver, _ = framework([pending_task()], {"n1", "n9"})
    fw.resourceOffers(driver, [offer("n1")])
    fw.expire_held(driver)
    assert driver.declined == [] and list(fw.held) == ["o-n1"]
    fw.now[0] = fw.offer_hold_s
    fw.expire_held(driver)
    assert driver.declined == ["o-n1"] and fw.held == {}


def test_a_launch_waits_for_the_offers_of_nodes_not_held_rather_than_spread_over_fewer():
    fw, driver, launcher = framework([], set())
    driver.reviveOffers = lambda: None
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])  # nothing pending: both declined
    launcher.store.pending = [pending_task()]
    launcher.needs = {"n1", "n2"}
    fw.resourceOffers(driver, [offer("n1")])  # n1 back first: held
    fw.revive(driver)  # n2's offer is not held: wait for it instead of placing on n1 alone
    assert driver.launched == [] and list(fw.held) == ["o-n1"]
    fw.resourceOffers(driver, [offer("n2")])
    assert driver.launched == [("o-n1", ["task-on-n1"]), ("o-n2", ["task-on-n2"])]


def test_after_a_revive_placement_waits_a_moment_for_every_nodes_offer():
    # n1 and n2 known; after the revive only n2's offer comes at first: a cluster that would fit on
    # it alone is not placed until n1's comes too (or the gathering time is over).
    fw, driver, launcher = framework([], set())
    driver.reviveOffers = lambda: None
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])  # nothing pending: declined, both known
    launcher.store.pending = [pending_task()]
    launcher.needs = {"n2"}
    fw.revive(driver)
    fw.resourceOffers(driver, [offer("n2")])
    assert driver.launched == [] and list(fw.held) == ["o-n2"]
    fw.resourceOffers(driver, [offer("n1")])  # every node's offer is here: placed
    assert driver.launched == [("o-n2", ["task-on-n2"])]


def test_the_gathering_ends_after_its_time():
    fw, driver, launcher = framework([], set())
    driver.reviveOffers = lambda: None
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])
    launcher.store.pending = [pending_task()]
    launcher.needs = {"n2"}
    fw.revive(driver)
    fw.resourceOffers(driver, [offer("n2")])
    fw.now[0] = fw.revive_gather_s
    fw.expire_held(driver)  # n1 never answered: place on what is held
    assert driver.launched == [("o-n2", ["task-on-n2"])]


def test_a_registered_agent_whose_offer_never_came_is_gathered_too():
    # The "4 Spark workers on 2 of 3 nodes" flake: n3's agent is registered with the master (just
    # started, or back after it was lost, which dropped it from last_offers) but no offer of it came
    # yet. A spread launch placed at once on n1 and n2's held offers; now it waits for n3's.
    fw, driver, launcher = framework([], set())
    driver.reviveOffers = lambda: None
    fw.registered_agents = lambda: {"n1", "n2", "n3"}
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])  # nothing pending: declined
    launcher.store.pending = [pending_task()]
    launcher.needs = {"n1"}
    fw.revive(driver)
    fw.resourceOffers(driver, [offer("n1"), offer("n2")])  # what revive brings back
    assert driver.launched == [] and sorted(fw.held) == ["o-n1", "o-n2"]
    launcher.needs = {"n1", "n3"}
    fw.resourceOffers(driver, [offer("n3")])
    assert driver.launched == [("o-n1", ["task-on-n1"]), ("o-n3", ["task-on-n3"])]


def test_without_the_masters_agent_list_the_nodes_seen_in_offers_are_gathered():
    fw, driver, launcher = framework([], set())
    driver.reviveOffers = lambda: None

    def unreachable():
        raise OSError("connection refused")
    fw.registered_agents = unreachable
    fw.resourceOffers(driver, [offer("n1")])
    launcher.store.pending = [pending_task()]
    launcher.needs = {"n1"}
    fw.revive(driver)
    fw.resourceOffers(driver, [offer("n1")])  # every node it knows is held: placed at once
    assert driver.launched == [("o-n1", ["task-on-n1"])]
