"""Members on kept disks (a stopped cluster started again, a dataset attached): placed on their
disks' node, on exactly those disks in their order, or not at all — and why, per node; the fresh
disks others ask for never include kept ones."""
from dataclasses import replace

import pytest

from spindle_scheduler.placement import place
from spindle_scheduler.placement.feasibility import checkers_for, infeasibility
from spindle_scheduler.placement.state import NodeState
from tests.unit.scheduler.builders import member, node, request


def pinned(i, node_name, *disks, **asked):
    return replace(member(i, **asked), pinned_node=node_name, pinned_disks=tuple(disks))


N1 = node("n1", hdd=3, ssd=1)  # disk ids n1/hdd0 … n1/hdd2, n1/ssd0
N2 = node("n2", hdd=3)


@pytest.mark.parametrize("asked, on, expected", [
    (pinned(1, "n1", "n1/hdd1"), N1, None),
    (pinned(1, "n1", "n1/ssd0", "n1/hdd2", disks={"hdd": 5}), N1, None),  # its counts do not matter: its disks do
    (pinned(1, "n1", "n1/hdd1"), N2, ("pinned", "its kept disks are on node n1")),
    (pinned(1, "n1", "n1/hdd1", "n1/hdd7"), N1, ("disks", "its kept disks n1/hdd7 are not offered now")),
    (pinned(1, "n1", "n1/hdd1", cpus=9), N1, ("cpus", "needs 9 cpus, 4 free")),
])
def test_a_pinned_member_fits_only_its_node_with_its_disks(asked, on, expected):
    state = NodeState.of(on)
    reason = infeasibility(state, asked, request([asked]))
    assert (reason and (reason.constraint, reason.message)) == (expected or None)
    assert infeasibility(state, asked, request([asked]), checkers_for(asked, request([asked]))) == reason


def test_it_gets_exactly_its_disks_in_order_and_others_get_what_is_left():
    plan = place(request([member(2, disks={"hdd": 1}), pinned(1, "n1", "n1/hdd2", "n1/hdd0")]), [N1])
    assert plan.placeable, plan.summary()
    assert {p.member_id: p.disk_ids for p in plan.placements} == {"m1": ["n1/hdd2", "n1/hdd0"], "m2": ["n1/hdd1"]}
    # one more fresh hdd than is left: not placeable, the kept ones are not handed out
    assert not place(request([member(2, disks={"hdd": 2}), pinned(1, "n1", "n1/hdd2", "n1/hdd0")]), [N1]).placeable


def test_fresh_disks_never_include_a_pinned_members_disks():
    plan = place(request([pinned(1, "n1", "n1/hdd0", "n1/hdd1"), member(2, disks={"hdd": 1})]), [N1, N2])
    assert plan.placeable, plan.summary()
    got = {p.member_id: (p.node, p.disk_ids) for p in plan.placements}
    assert got["m1"] == ("n1", ["n1/hdd0", "n1/hdd1"])
    assert not set(got["m2"][1]) & {"n1/hdd0", "n1/hdd1"}


def test_a_pinned_member_whose_node_is_not_offering_waits_and_says_why_per_node():
    plan = place(request([pinned(1, "n1", "n1/hdd0")]), [N2])
    assert not plan.placeable
    assert [(r.node, r.constraint) for r in plan.unplaced["m1"]] == [("n2", "pinned")]


def test_a_whole_cluster_started_again_goes_back_where_it_was():
    members = [pinned(i, name, f"{name}/hdd{i}") for i, name in enumerate(["n2", "n1", "n2"])]
    plan = place(request(members), [N1, N2])  # spread would have put them elsewhere
    assert {p.member_id: p.node for p in plan.placements} == {"m0": "n2", "m1": "n1", "m2": "n2"}
