"""Ranking: among nodes that can take a member, which is best. Higher scores win.

``spread`` (default) keeps members of one cluster apart and prefers emptier nodes; ``pack`` fills
nodes up. ``preferred_hosts`` outweighs both. A member kept apart (anti-affinity, replicas) goes to
the rack holding the fewest of its role first, whatever else.
"""
from collections.abc import Mapping

from spindle_scheduler.placement.model import PlacementRequest
from spindle_scheduler.placement.state import NodeState

PREFERRED_BONUS = 1000.0
SAME_CLUSTER_PENALTY = 100.0
SAME_RACK_PENALTY = 10_000.0


def utilisation(node: NodeState) -> float:
    """How full the node's cpus and memory are, 0–1 (mean of both)."""
    cpu = 1 - node.cpus / node.total_cpus if node.total_cpus else 1.0
    mem = 1 - node.mem_mb / node.total_mem_mb if node.total_mem_mb else 1.0
    return (cpu + mem) / 2


def score(node: NodeState, request: PlacementRequest, rack_load: Mapping[str, int] | None = None) -> float:
    """How good ``node`` (feasible) is for the next member of ``request``; higher wins. ``rack_load``:
    for a member kept apart, how many of its role each rack holds already."""
    base = utilisation(node) if request.strategy == "pack" else 1 - utilisation(node)
    if rack_load:
        base -= SAME_RACK_PENALTY * rack_load.get(node.rack, 0)
    if request.strategy != "pack":
        base -= SAME_CLUSTER_PENALTY * node.members_of.get(request.cluster_id, 0)
    if node.name in request.preferred_hosts:
        base += PREFERRED_BONUS
    return base
