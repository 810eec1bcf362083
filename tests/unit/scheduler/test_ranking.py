"""Ranking: spread vs pack, the same-cluster penalty, preferred hosts."""
from spindle_scheduler.placement.ranking import score, utilisation
from spindle_scheduler.placement.state import NodeState
from tests.unit.scheduler.builders import member, node, request


def busy_and_idle():
    busy = NodeState.of(node("busy", cpus=8, mem=8192))
    busy.take("other", member(1, cpus=6, mem=6144, disks={}))
    return busy, NodeState.of(node("idle", cpus=8, mem=8192))


def test_utilisation_is_the_mean_of_cpu_and_memory_use():
    busy, idle = busy_and_idle()
    assert utilisation(busy) == 0.75 and utilisation(idle) == 0.0


def test_spread_prefers_the_emptier_node_and_pack_the_fuller_one():
    busy, idle = busy_and_idle()
    spread, pack = request([]), request([], strategy="pack")
    assert score(idle, spread) > score(busy, spread)
    assert score(busy, pack) > score(idle, pack)


def test_members_of_the_same_cluster_lower_a_nodes_score_under_spread_only():
    crowded = NodeState.of(node("crowded", cpus=64, mem=65536, running=[("c1", "worker")]))
    fuller = NodeState.of(node("fuller", cpus=8, mem=8192))
    fuller.take("other", member(1, cpus=7, mem=7000, disks={}))
    assert score(fuller, request([])) > score(crowded, request([])), "another cluster's load beats our own member"
    assert score(crowded, request([], cluster="c2")) > score(fuller, request([], cluster="c2"))
    assert score(fuller, request([], strategy="pack")) > score(crowded, request([], strategy="pack"))


def test_preferred_hosts_outrank_strategy():
    busy, idle = busy_and_idle()
    prefers_busy = request([], preferred_hosts=["busy"])
    assert score(busy, prefers_busy) > score(idle, prefers_busy)
