"""Placing a whole request, all or nothing, with reasons for every node that did not fit.

For speed with many nodes (as Nomad's limit iterator), each member looks at nodes from a rotating
start until it has found ``candidates`` feasible ones and takes the best-ranked of those; only when
no node fits does it check them all, so the explanation is complete. A member kept apart on a
platform of several racks looks at every node: the rack with the fewest of its role wins.
"""
import math
import zlib
from collections import Counter
from collections.abc import Iterable
from itertools import chain

from spindle_scheduler.placement.feasibility import checkers_for, infeasibility
from spindle_scheduler.placement.model import MemberRequest, NodeOffer, PlacementRequest, Reason
from spindle_scheduler.placement.plan import Placement, Plan
from spindle_scheduler.placement.ranking import score
from spindle_scheduler.placement.state import NodeState


def _candidates(node_count: int) -> int:
    return max(2, math.ceil(math.log2(node_count + 1)))


def _hardest_first(member: MemberRequest) -> tuple:
    # Members with the fewest places to go are placed first: those pinned to their kept disks' node first of all.
    return (member.pinned_node is None, -sum(member.disks.values()), -(member.cpuset or 0), -member.cpus,
            -member.mem_mb, member.member_id)


class _View:
    """The nodes as this request sees them: its own copies where it placed members, else the originals."""

    def __init__(self, nodes: list[NodeState]):
        self.nodes = nodes
        self.copies: dict[int, NodeState] = {}

    def __getitem__(self, index: int) -> NodeState:
        return self.copies.get(index) or self.nodes[index]

    def take(self, index: int, cluster_id: str, member: MemberRequest) -> Placement:
        if index not in self.copies:
            self.copies[index] = self.nodes[index].copy()
        return self.copies[index].take(cluster_id, member)

    def rack_load(self, cluster_id: str, role: str) -> Counter[str]:
        """How many nodes of each rack hold a member of ``role`` of the cluster (at most one per node
        for a role kept apart)."""
        return Counter(self[i].rack for i in range(len(self.nodes)) if (cluster_id, role) in self[i].roles)

    def reasons(self, member: MemberRequest, request: PlacementRequest) -> list[Reason]:
        """Why each node (as this request left it) cannot take ``member``: every checker, every node."""
        reasons = [infeasibility(self[i], member, request) for i in range(len(self.nodes))]
        return [r for r in reasons if r] or [Reason("*", "nodes", "no node is offering resources")]


def _scan_order(count: int, cursor: int, first: list[int]) -> Iterable[int]:
    """``first`` (preferred hosts), then every other node once, starting at ``cursor``."""
    rotation = chain(range(cursor, count), range(cursor))
    if not first:
        return rotation
    skip = set(first)
    return chain(first, (index for index in rotation if index not in skip))


def place(request: PlacementRequest, offers: list[NodeOffer], states: list[NodeState] | None = None) -> Plan:
    """Place every member of ``request`` or none.

    ``states`` (working copies from earlier ``place`` calls in the same round) lets several
    requests share one round of offers: a placeable request consumes from them, an unplaceable one
    leaves them untouched.
    """
    nodes = states if states is not None else [NodeState.of(o) for o in offers]
    trial = _View(nodes)  # copy-on-write: only nodes a member lands on are copied
    count, limit = len(nodes), _candidates(len(nodes))
    wanted = set(request.preferred_hosts)
    preferred = [i for i, n in enumerate(nodes) if n.name in wanted] if wanted else []
    # Each request starts its scan at its own (stable) place, so requests do not all wade through
    # the same full nodes first; each member goes on from where the previous one stopped.
    cursor = zlib.crc32(request.cluster_id.encode()) % count if count else 0
    racked = len({n.rack for n in nodes}) > 1
    placements, unplaced = [], {}
    for member in sorted(request.members, key=_hardest_first):
        best, best_score, found, scanned = None, 0.0, 0, 0
        checkers = checkers_for(member, request)
        by_rack = racked and request.apart(member.role)
        rack_load = trial.rack_load(request.cluster_id, member.role) if by_rack else None
        for index in _scan_order(count, cursor, preferred):
            scanned += 1
            node = trial[index]
            if infeasibility(node, member, request, checkers) is None:
                found += 1
                node_score = score(node, request, rack_load)
                if best is None or node_score > best_score:
                    best, best_score = index, node_score
                if found >= limit and not by_rack:
                    break
        if best is None:
            unplaced[member.member_id] = trial.reasons(member, request)
            continue
        placements.append(trial.take(best, request.cluster_id, member))
        cursor = (cursor + scanned) % count
    if unplaced:
        return Plan([], unplaced)
    if states is not None:
        for index, copy in trial.copies.items():
            states[index] = copy
    return Plan(sorted(placements, key=lambda p: p.member_id), {})
