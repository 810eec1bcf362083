"""Placement stages on plain data: feasibility per resource, ranking, atomic plans, reasons."""
import random

import pytest

from spindle_scheduler.placement import MemberRequest, NodeOffer, PlacementRequest, place
from spindle_scheduler.placement.feasibility import infeasibility
from spindle_scheduler.placement.model import OfferedDisk
from spindle_scheduler.placement.state import NodeState


def node(name, cpus=4.0, mem=8192.0, hdd=2, ssd=0, numa=None):
    disks = [OfferedDisk(f"{name}/h{i}", "hdd") for i in range(hdd)] + [OfferedDisk(f"{name}/s{i}", "ssd") for i in range(ssd)]
    return NodeOffer(name, cpus, mem, disks, numa or {})


def member(i, cpus=1.0, mem=512.0, disks=None, cpuset=None, role="worker"):
    return MemberRequest(f"m{i}", role, cpus, mem, disks if disks is not None else {"hdd": 1}, cpuset)


@pytest.mark.parametrize("request_member,expected", [
    (member(1, cpus=5), ("cpus", "needs 5 cpus, 4 free")),
    (member(1, mem=9000), ("mem", "needs 9000 MiB memory, 8192 free")),
    (member(1, disks={"ssd": 2}), ("disks", "needs 2 ssd disks, 1 free")),
    (member(1, disks={"hdd": 3}), ("disks", "needs 3 hdd disks, 2 free")),
    (member(1, cpuset=3), ("cpuset", "no NUMA node with 3 free cpus (largest: 2)")),
])
def test_each_constraint_explains_itself(request_member, expected):
    state = NodeState.of(node("node-3", ssd=1, numa={0: [0, 1], 1: [2, 3]}))
    reason = infeasibility(state, request_member)
    assert (reason.node, reason.constraint, reason.message) == ("node-3", *expected)
    assert infeasibility(state, member(2, disks={"ssd": 1}, cpuset=2)) is None


def test_spread_puts_members_of_a_cluster_on_different_nodes():
    plan = place(PlacementRequest("c1", [member(i) for i in range(3)]), [node(f"n{i}") for i in range(3)])
    assert plan.placeable and sorted(p.node for p in plan.placements) == ["n0", "n1", "n2"]


def test_pack_fills_one_node_first():
    plan = place(PlacementRequest("c1", [member(i) for i in range(2)], strategy="pack"), [node("n0"), node("n1")])
    assert {p.node for p in plan.placements} == {"n0"} or {p.node for p in plan.placements} == {"n1"}


def test_preferred_hosts_win():
    plan = place(PlacementRequest("c1", [member(1)], preferred_hosts=["n2"]), [node(f"n{i}") for i in range(4)])
    assert plan.placements[0].node == "n2"


def test_whole_disks_and_cpusets_are_never_shared():
    plan = place(PlacementRequest("c1", [member(i, disks={"hdd": 1}, cpuset=1) for i in range(4)]),
                 [node("n0", hdd=2, numa={0: [0, 1]}), node("n1", hdd=2, numa={0: [2], 1: [3]})])
    assert plan.placeable
    disks = [d for p in plan.placements for d in p.disk_ids]
    cpus = [c for p in plan.placements for c in p.cpu_ids]
    assert len(disks) == len(set(disks)) == 4 and sorted(cpus) == [0, 1, 2, 3]


def test_unplaceable_request_places_nothing_and_gives_reasons_per_node():
    offers = [node("n0", ssd=1), node("n1", ssd=0)]
    states = [NodeState.of(o) for o in offers]
    plan = place(PlacementRequest("c1", [member(1, disks={}), member(2, disks={"ssd": 2})]), offers, states)
    assert not plan.placeable and plan.placements == []
    assert [str(r) for r in plan.unplaced["m2"]] == ["n0: needs 2 ssd disks, 1 free", "n1: needs 2 ssd disks, 0 free"]
    assert plan.summary() == "m2 fits no node: n0: needs 2 ssd disks, 1 free; n1: needs 2 ssd disks, 0 free"
    assert [s.cpus for s in states] == [4.0, 4.0], "an unplaceable request consumes nothing"


def test_requests_in_one_round_share_the_offers():
    offers = [node("n0", hdd=1)]
    states = [NodeState.of(o) for o in offers]
    assert place(PlacementRequest("c1", [member(1)]), offers, states).placeable
    second = place(PlacementRequest("c2", [member(2)]), offers, states)
    assert str(second.unplaced["m2"][0]) == "n0: needs 1 hdd disk, 0 free"


def test_no_offers_is_explained():
    plan = place(PlacementRequest("c1", [member(1)]), [])
    assert plan.summary() == "m1 fits no node: *: no node is offering resources"


def test_random_requests_never_overcommit_or_double_allocate():
    rng = random.Random(7)
    offers = [node(f"n{i}", cpus=rng.choice([2, 4, 8]), mem=rng.choice([4096, 8192]), hdd=rng.randint(0, 4),
                   ssd=rng.randint(0, 2), numa={0: [0, 1], 1: [2, 3]}) for i in range(20)]
    states = [NodeState.of(o) for o in offers]
    given = []
    for c in range(60):
        members = [MemberRequest(f"c{c}m{i}", "w", rng.choice([0.5, 1, 2]), rng.choice([256, 1024, 2048]),
                                 {rng.choice(["hdd", "ssd"]): rng.randint(0, 2)}, rng.choice([None, None, 1, 2]))
                   for i in range(rng.randint(1, 4))]
        plan = place(PlacementRequest(f"c{c}", members, strategy=rng.choice(["spread", "pack"])), offers, states)
        given += plan.placements
    assert given, "the random workload placed something"
    disks = [d for p in given for d in p.disk_ids]
    assert len(disks) == len(set(disks))
    for offer, state in zip(offers, states):
        assert state.cpus >= -1e-9 and state.mem_mb >= -1e-9
        cpu_ids = [c for p in given if p.node == offer.node for c in p.cpu_ids]
        assert len(cpu_ids) == len(set(cpu_ids))
