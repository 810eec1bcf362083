"""An agent the master reports lost takes its last offer with it: declined offers are never
rescinded, so without this a plan would still place members on a dead node."""
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.mesos.offers import ParsedOffer


def test_a_lost_agent_leaves_no_offer_to_plan_on():
    fw = SpindleFramework(store=None, launcher=None, release=None)
    fw.last_offers = {"n1": ParsedOffer("o1", "A-S1", "n1"), "n2": ParsedOffer("o2", "A-S2", "n2")}
    fw.slaveLost(None, {"value": "A-S1"})
    assert list(fw.last_offers) == ["n2"]
    fw.slaveLost(None, {"value": "A-S9"})  # an agent we had no offer of
    assert list(fw.last_offers) == ["n2"]


def test_a_rescinded_offer_is_forgotten():
    fw = SpindleFramework(store=None, launcher=None, release=None)
    fw.last_offers = {"n1": ParsedOffer("o1", "A-S1", "n1")}
    fw.offerRescinded(None, {"value": "o1"})
    assert fw.last_offers == {}
