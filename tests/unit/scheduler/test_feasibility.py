"""Feasibility: each checker on its own resource, with the reason users will see."""
import pytest

from spindle_scheduler.placement.feasibility import (
    check_anti_affinity,
    check_cpus,
    check_cpuset,
    check_disks,
    check_excluded,
    check_mem,
    checkers_for,
    infeasibility,
)
from spindle_scheduler.placement.state import NodeState
from tests.unit.scheduler.builders import member, node, request

NODE = NodeState.of(node("node-3", cpus=2.5, mem=4096, hdd=2, ssd=1, numa={0: [0, 1], 1: [2]}))
REQUEST = request([])


@pytest.mark.parametrize("checker,asked,expected", [
    (check_cpus, member(1, cpus=4), ("cpus", "needs 4 cpus, 2.5 free")),
    (check_mem, member(1, mem=8192), ("mem", "needs 8192 MiB memory, 4096 free")),
    (check_disks, member(1, disks={"ssd": 2}), ("disks", "needs 2 ssd disks, 1 free")),
    (check_disks, member(1, disks={"hdd": 3}), ("disks", "needs 3 hdd disks, 2 free")),
    (check_disks, member(1, disks={"nvme": 1}), ("disks", "needs 1 nvme disk, 0 free")),
    (check_cpuset, member(1, cpuset=3), ("cpuset", "no NUMA node with 3 free cpus (largest: 2)")),
])
def test_each_checker_explains_its_resource(checker, asked, expected):
    reason = checker(NODE, asked, REQUEST)
    assert (reason.node, reason.constraint, reason.message) == ("node-3", *expected)
    assert reason.as_dict() == {"node": "node-3", "constraint": expected[0], "message": expected[1]}
    assert infeasibility(NODE, asked, REQUEST) == reason


@pytest.mark.parametrize("asked", [
    member(1, cpus=2.5, mem=4096, disks={"hdd": 2, "ssd": 1}),  # exactly what is free
    member(1, disks={"hdd": 0, "ssd": 1}),  # a zero count asks for nothing
    member(1, disks={}, cpuset=2),
])
def test_a_member_that_fits_passes_every_checker(asked):
    assert infeasibility(NODE, asked, REQUEST) is None


def test_disk_classes_are_not_interchangeable():
    # Two free hdds do not make up for a missing ssd, nor does an ssd stand in for an nvme.
    state = NodeState.of(node("n", hdd=4, ssd=1))
    assert check_disks(state, member(1, disks={"ssd": 2}), REQUEST).message == "needs 2 ssd disks, 1 free"
    assert check_disks(state, member(1, disks={"nvme": 1}), REQUEST).message == "needs 1 nvme disk, 0 free"
    assert check_disks(state, member(1, disks={"hdd": 4, "ssd": 1}), REQUEST) is None


def test_cpuset_must_fit_on_one_numa_node_not_across_them():
    # 4 cpus are free in total, but split 2 + 2: a 3-cpu cpuset does not fit.
    state = NodeState.of(node("n", cpus=8, numa={0: [0, 1], 1: [4, 5]}))
    assert check_cpuset(state, member(1, cpuset=3), REQUEST).message == "no NUMA node with 3 free cpus (largest: 2)"
    assert check_cpuset(NodeState.of(node("bare")), member(1, cpuset=1), REQUEST).message == \
        "no NUMA node with 1 free cpus (largest: 0)"
    assert check_cpuset(state, member(1, cpuset=None), REQUEST) is None


def test_hard_anti_affinity_counts_members_of_the_same_cluster_and_role_only():
    state = NodeState.of(node("n", running=[("c1", "master"), ("c2", "worker")]))
    strict = request([], anti_affinity_roles=["master", "worker"])
    reason = check_anti_affinity(state, member(1, role="master"), strict)
    assert (reason.constraint, reason.message) == (
        "anti_affinity", "already has a member of role master of cluster c1 (anti-affinity: one per node)")
    assert check_anti_affinity(state, member(1, role="worker"), strict) is None, "c2's worker is another cluster"
    assert check_anti_affinity(state, member(1, role="master"), REQUEST) is None, "not asked: soft spread only"


def test_first_failing_constraint_is_the_reason():
    reason = infeasibility(NODE, member(1, cpus=4, mem=8192, disks={"ssd": 2}), REQUEST)
    assert reason.constraint == "cpus"


# The launch's placement options, node by node: (why, request options, members running on the node,
# the member asked, the reason expected (constraint, message) or None when the node takes it).
RUNNING = [("c1", "worker"), ("c2", "master")]
EXCLUDED = "excluded by the launch's placement (excluded_nodes)"
OPTION_TABLE = [
    ("an excluded node says so", {"excluded_hosts": ["n"]}, [], member(1), ("excluded", EXCLUDED)),
    ("another node excluded: this one fits", {"excluded_hosts": ["m"]}, [], member(1), None),
    ("excluded wins over what else it lacks", {"excluded_hosts": ["n"]}, [], member(1, cpus=99),
     ("excluded", EXCLUDED)),
    ("excluded wins over anti-affinity", {"excluded_hosts": ["n"], "anti_affinity_roles": ["worker"]}, RUNNING,
     member(1), ("excluded", EXCLUDED)),
    ("a running member of the role blocks the node", {"anti_affinity_roles": ["worker"]}, RUNNING, member(1),
     ("anti_affinity", "already has a member of role worker of cluster c1 (anti-affinity: one per node)")),
    ("another cluster's member of the role does not", {"anti_affinity_roles": ["master"]}, RUNNING,
     member(1, role="master"), None),
    ("a role not named is not held apart", {"anti_affinity_roles": ["master"]}, RUNNING, member(1), None),
    ("not asked: running members only lower the spread score", {}, RUNNING, member(1), None),
]


@pytest.mark.parametrize("why,options,running,asked,expected", OPTION_TABLE, ids=[row[0] for row in OPTION_TABLE])
def test_placement_options_decide_per_node(why, options, running, asked, expected):
    state = NodeState.of(node("n", running=running))
    wanted = request([asked], **options)
    reason = infeasibility(state, asked, wanted, checkers_for(asked, wanted))
    assert (reason and (reason.node, reason.constraint, reason.message)) == (expected and ("n", *expected)), why
    assert infeasibility(state, asked, wanted) == reason, "the checkers placement skips could not have failed"


def test_excluded_checks_the_request_not_the_member():
    assert check_excluded(NODE, member(1), request([], excluded_hosts=["node-3"])).constraint == "excluded"
    assert check_excluded(NODE, member(1), REQUEST) is None
