"""The placer: whole requests, all or nothing, on shared working copies of the offers."""
import random

import pytest

from spindle_scheduler.placement import MemberRequest, PlacementRequest, place
from tests.unit.scheduler.builders import member, node, request, states


def nodes_of(plan):
    return [p.node for p in sorted(plan.placements, key=lambda p: p.member_id)]


def test_spread_puts_members_of_a_cluster_on_different_nodes():
    plan = place(request([member(i) for i in range(3)]), [node(f"n{i}") for i in range(3)])
    assert plan.placeable and sorted(nodes_of(plan)) == ["n0", "n1", "n2"]


def test_spread_shares_a_node_only_when_it_must():
    plan = place(request([member(i) for i in range(4)]), [node("n0"), node("n1")])
    assert sorted(nodes_of(plan)) == ["n0", "n0", "n1", "n1"]


def test_spread_avoids_nodes_already_running_the_cluster():
    offers = [node("n0", running=[("c1", "worker")]), node("n1")]
    assert nodes_of(place(request([member(1)]), offers)) == ["n1"]


def test_pack_fills_one_node_first():
    plan = place(request([member(i) for i in range(2)], strategy="pack"), [node("n0"), node("n1")])
    assert len(set(nodes_of(plan))) == 1


def test_preferred_hosts_win_when_they_fit_and_are_skipped_when_not():
    offers = [node(f"n{i}") for i in range(4)]
    assert nodes_of(place(request([member(1)], preferred_hosts=["n2"]), offers)) == ["n2"]
    offers[2] = node("n2", hdd=0)
    assert nodes_of(place(request([member(1)], preferred_hosts=["n2"]), offers)) != ["n2"]


def test_hard_anti_affinity_keeps_a_role_one_per_node_or_fails():
    masters = [member(i, role="master", disks={}) for i in range(3)]
    plan = place(request(masters, strategy="pack", anti_affinity_roles=["master"]),
                 [node("n0"), node("n1"), node("n2")])
    assert sorted(nodes_of(plan)) == ["n0", "n1", "n2"], "pack would have stacked them"
    plan = place(request(masters, anti_affinity_roles=["master"]), [node("n0"), node("n1")])
    assert not plan.placeable
    [(member_id, reasons)] = plan.unplaced.items()
    assert [r.constraint for r in reasons] == ["anti_affinity", "anti_affinity"]
    assert reasons[0].message == "already has a member of role master of cluster c1 (anti-affinity: one per node)"


# Replica roles (DataNodes, brokers, Cassandra nodes): one per node unless the platform has one node,
# and over racks first. (why, request options, offers, members, the nodes they land on (sorted), or
# the reasons (node, constraint) of a member that fits nowhere.)
DN = "datanode"
REPLICAS_TABLE = [
    ("replicas one per node, even packed", {"replica_roles": [DN], "strategy": "pack"},
     [node("n0"), node("n1"), node("n2")], [member(i, role=DN) for i in range(3)], ["n0", "n1", "n2"]),
    ("more replicas than nodes: refused on each node", {"replica_roles": [DN]},
     [node("n0"), node("n1")], [member(i, role=DN) for i in range(3)], [("n0", "anti_affinity"),
                                                                       ("n1", "anti_affinity")]),
    ("a one-node platform: they share it", {"replica_roles": [DN], "replicas_may_share": True},
     [node("n0", hdd=3)], [member(i, role=DN) for i in range(3)], ["n0", "n0", "n0"]),
    ("explicit anti-affinity stays hard on one node", {"anti_affinity_roles": [DN], "replicas_may_share": True},
     [node("n0", hdd=3)], [member(i, role=DN) for i in range(2)], [("n0", "anti_affinity")]),
    ("other roles of the cluster may share", {"replica_roles": [DN]},
     [node("n0", hdd=3)], [member(1, role="namenode"), member(2, role=DN)], ["n0", "n0"]),
    ("over racks first, counting replicas already running (a replacement)", {"replica_roles": [DN]},
     [node("a1", rack="r1", running=[("c1", DN)]), node("a2", rack="r1"), node("b1", rack="r2", running=[("c1", DN)]),
      node("c1n", rack="r3")], [member(3, role=DN)], ["c1n"]),
    ("four replicas on two racks of two nodes: two per rack, one per node", {"replica_roles": [DN]},
     [node("a1", rack="r1"), node("a2", rack="r1"), node("b1", rack="r2"), node("b2", rack="r2")],
     [member(i, role=DN) for i in range(4)], ["a1", "a2", "b1", "b2"]),
]


@pytest.mark.parametrize("why,options,offers,members,expected", REPLICAS_TABLE, ids=[r[0] for r in REPLICAS_TABLE])
def test_replicas_apart_one_per_node_over_racks_first(why, options, offers, members, expected):
    plan = place(request(members, **options), offers)
    if expected and isinstance(expected[0], tuple):
        assert not plan.placeable and plan.placements == [], why
        reasons = next(iter(plan.unplaced.values()))
        assert [(r.node, r.constraint) for r in reasons] == expected, why
    else:
        assert plan.placeable and sorted(nodes_of(plan)) == expected, why


@pytest.mark.parametrize("strategy", ["spread", "pack"])
def test_two_replicas_take_two_racks_though_one_rack_has_more_nodes(strategy):
    offers = [node("a1", rack="r1"), node("a2", rack="r1"), node("a3", rack="r1"), node("b1", rack="r2")]
    for cluster in ("c1", "c2", "c3", "c4", "c5"):  # scans start at a place of each cluster's own
        plan = place(request([member(i, role=DN) for i in range(2)], cluster=cluster, strategy=strategy,
                             replica_roles=[DN]), offers)
        assert sorted(n[0] for n in nodes_of(plan)) == ["a", "b"], (cluster, nodes_of(plan))


def test_replicas_spread_over_racks_among_many_nodes():
    """Among 64 nodes (where a member looks at a few only, without racks), 3 replicas land in 3 racks."""
    offers = [node(f"n{i:02}", rack=f"r{i // 16}") for i in range(64)]
    for seed in range(20):
        plan = place(request([member(i, role=DN) for i in range(3)], cluster=f"c{seed}", replica_roles=[DN]), offers)
        racks = {int(n[1:]) // 16 for n in nodes_of(plan)}
        assert len(racks) == 3, (seed, nodes_of(plan))


# Excluded nodes and anti-affinity with members already running (e.g. one member of a running
# cluster being replaced): (why, request options, offers, members, the nodes they land on (sorted), or
# the reasons (node, constraint) of the one member that fits nowhere).
WORKER_ON_N0 = [("c1", "worker")]
OPTIONS_TABLE = [
    ("an excluded node is never used", {"excluded_hosts": ["n0"]},
     [node("n0"), node("n1")], [member(1), member(2)], ["n1", "n1"]),
    ("an excluded preferred node is not used either", {"excluded_hosts": ["n0"], "preferred_hosts": ["n0"]},
     [node("n0"), node("n1")], [member(1)], ["n1"]),
    ("every node excluded: each says so", {"excluded_hosts": ["n0", "n1"]},
     [node("n0"), node("n1")], [member(1)], [("n0", "excluded"), ("n1", "excluded")]),
    ("an excluded node says excluded, the others what they lack", {"excluded_hosts": ["n0"]},
     [node("n0"), node("n1", hdd=0)], [member(1)], [("n0", "excluded"), ("n1", "disks")]),
    ("a replacement keeps away from its role's running member, even packed",
     {"anti_affinity_roles": ["worker"], "strategy": "pack"},
     [node("n0", running=WORKER_ON_N0), node("n1")], [member(1)], ["n1"]),
    ("a replacement of a role without anti-affinity may join it when packing", {"strategy": "pack"},
     [node("n0", running=WORKER_ON_N0)], [member(1)], ["n0"]),
    ("running members and this request's own count together",
     {"anti_affinity_roles": ["worker"]},
     [node("n0", running=WORKER_ON_N0), node("n1"), node("n2")], [member(1), member(2)], ["n1", "n2"]),
    ("no node without a running member of the role: refused on each",
     {"anti_affinity_roles": ["worker"]},
     [node("n0", running=WORKER_ON_N0), node("n1")], [member(1), member(2)], [("n0", "anti_affinity"),
                                                                              ("n1", "anti_affinity")]),
    ("another cluster's running member does not count", {"anti_affinity_roles": ["worker"]},
     [node("n0", running=[("c2", "worker")])], [member(1)], ["n0"]),
    ("spread counts running members of the cluster", {},
     [node("n0", running=WORKER_ON_N0 * 2), node("n1", running=WORKER_ON_N0)], [member(1)], ["n1"]),
]


@pytest.mark.parametrize("why,options,offers,members,expected", OPTIONS_TABLE, ids=[row[0] for row in OPTIONS_TABLE])
def test_excluded_nodes_and_anti_affinity_with_running_members(why, options, offers, members, expected):
    plan = place(request(members, **options), offers)
    if expected and isinstance(expected[0], tuple):
        assert not plan.placeable and plan.placements == [], why
        [reasons] = [reasons for reasons in plan.unplaced.values()]
        assert [(r.node, r.constraint) for r in reasons] == expected, why
    else:
        assert plan.placeable and sorted(nodes_of(plan)) == expected, why


def test_whole_disks_and_cpusets_are_never_shared():
    plan = place(request([member(i, disks={"hdd": 1}, cpuset=1) for i in range(4)]),
                 [node("n0", hdd=2, numa={0: [0, 1]}), node("n1", hdd=2, numa={0: [2], 1: [3]})])
    assert plan.placeable
    disks = [(p.node, d) for p in plan.placements for d in p.disk_ids]
    cpus = [(p.node, c) for p in plan.placements for c in p.cpu_ids]
    assert len(set(disks)) == 4 and len(set(cpus)) == 4
    assert all(len(p.cpu_ids) == 1 and len(p.disk_ids) == 1 for p in plan.placements)


def test_a_cpuset_comes_from_one_numa_node_the_tightest_that_fits():
    plan = place(request([member(1, disks={}, cpuset=2)]), [node("n0", numa={0: [0, 1, 2, 3], 1: [4, 5]})])
    assert plan.placements[0].cpu_ids == [4, 5]


def test_a_member_gets_the_disks_of_each_class_it_asked_for():
    plan = place(request([member(1, disks={"hdd": 2, "ssd": 1})]), [node("n0", hdd=3, ssd=2)])
    assert plan.placements[0].disk_ids == ["n0/hdd0", "n0/hdd1", "n0/ssd0"]


def test_unplaceable_request_places_nothing_and_gives_reasons_per_node():
    offers = [node("n0", ssd=1), node("n1", ssd=0)]
    shared = states(*offers)
    plan = place(request([member(1, disks={}), member(2, disks={"ssd": 2})]), offers, shared)
    assert not plan.placeable and plan.placements == []
    assert [r.as_dict() for r in plan.unplaced["m2"]] == [
        {"node": "n0", "constraint": "disks", "message": "needs 2 ssd disks, 1 free"},
        {"node": "n1", "constraint": "disks", "message": "needs 2 ssd disks, 0 free"}]
    assert plan.summary() == "m2 fits no node: n0: needs 2 ssd disks, 1 free; n1: needs 2 ssd disks, 0 free"
    assert [(s.cpus, len(s.disks["hdd"])) for s in shared] == [(4.0, 2), (4.0, 2)], "nothing consumed"


def test_reasons_count_what_the_requests_own_members_took():
    plan = place(request([member(1, disks={"ssd": 1}), member(2, disks={"ssd": 1})]), [node("n0", ssd=1)])
    assert [str(r) for r in plan.unplaced["m2"]] == ["n0: needs 1 ssd disk, 0 free"]


def test_every_failing_member_is_explained():
    plan = place(request([member(1, cpus=9), member(2, mem=99999), member(3)]), [node("n0")])
    assert {m: [r.constraint for r in rs] for m, rs in plan.unplaced.items()} == {"m1": ["cpus"], "m2": ["mem"]}


def test_requests_in_one_round_share_the_offers():
    offers = [node("n0", hdd=1)]
    shared = states(*offers)
    assert place(request([member(1)]), offers, shared).placeable
    second = place(request([member(2)], cluster="c2"), offers, shared)
    assert str(second.unplaced["m2"][0]) == "n0: needs 1 hdd disk, 0 free"


def test_no_offers_is_explained():
    plan = place(request([member(1)]), [])
    assert plan.summary() == "m1 fits no node: *: no node is offering resources"


def test_large_cluster_unplaceable_member_is_checked_against_every_node():
    offers = [node(f"n{i}", ssd=1) for i in range(200)]
    plan = place(request([member(1, disks={"ssd": 2})]), offers)
    assert len(plan.unplaced["m1"]) == 200
    assert plan.summary() == "m1 fits no node: 200 of 200 nodes short on disks, e.g. n0: needs 2 ssd disks, 1 free"


def test_random_rounds_never_double_allocate_or_overcommit():
    rng = random.Random(7)
    offers = [node(f"n{i}", cpus=rng.choice([2, 4, 8]), mem=rng.choice([4096, 8192]), hdd=rng.randint(0, 4),
                   ssd=rng.randint(0, 2), nvme=rng.randint(0, 1), numa={0: [0, 1], 1: [2, 3]}) for i in range(30)]
    shared = states(*offers)
    given, failed = [], 0
    for c in range(150):
        members = [MemberRequest(f"c{c}m{i}", rng.choice(["w", "m"]), rng.choice([0.5, 1, 2]),
                                 rng.choice([256, 1024, 2048]),
                                 {rng.choice(["hdd", "ssd", "nvme"]): rng.randint(0, 2)},
                                 rng.choice([None, None, 1, 2]))
                   for i in range(rng.randint(1, 5))]
        strict = rng.choice([[], ["m"]])
        plan = place(PlacementRequest(f"c{c}", members, strategy=rng.choice(["spread", "pack"]),
                                      anti_affinity_roles=strict), offers, shared)
        assert plan.placeable == (len(plan.placements) == len(members)), "all or nothing"
        failed += not plan.placeable
        by_id = {m.member_id: m for m in members}
        given += [(c, p, by_id[p.member_id]) for p in plan.placements]
        if strict:
            master_nodes = [p.node for p in plan.placements if by_id[p.member_id].role == "m"]
            assert len(master_nodes) == len(set(master_nodes)), "hard anti-affinity held"
    assert given and failed, "the workload both placed and refused requests"
    disks = [(p.node, d) for _, p, _ in given for d in p.disk_ids]
    cpu_ids = [(p.node, c) for _, p, _ in given for c in p.cpu_ids]
    assert len(disks) == len(set(disks)) and len(cpu_ids) == len(set(cpu_ids))
    for offer in offers:
        here = [m for _, p, m in given if p.node == offer.node]
        assert sum(m.cpus for m in here) <= offer.cpus + 1e-9 and sum(m.mem_mb for m in here) <= offer.mem_mb
        offered = {d.disk_id: d.disk_class for d in offer.disks}
        for _, p, m in given:
            if p.node == offer.node:
                assert sorted(offered[d] for d in p.disk_ids) == sorted(c for c, n in m.disks.items() for _ in range(n))
                assert len(p.cpu_ids) == (m.cpuset or 0)
                assert set(p.cpu_ids) <= {0, 1} or set(p.cpu_ids) <= {2, 3}, "a cpuset sits on one NUMA node"
