"""Placing a whole request, all or nothing, with reasons for every node that did not fit.

For speed with many nodes (as Nomad's limit iterator), each member looks at nodes from a rotating
start until it has found ``candidates`` feasible ones and takes the best-ranked of those; only when
no node fits does it check them all, so the explanation is complete.
"""
import math
import zlib

from spindle_scheduler.placement.feasibility import infeasibility
from spindle_scheduler.placement.model import NodeOffer, PlacementRequest, Plan, Reason
from spindle_scheduler.placement.ranking import score
from spindle_scheduler.placement.state import NodeState


def _candidates(node_count: int) -> int:
    return max(2, math.ceil(math.log2(node_count + 1)))


class _View:
    """The nodes as this request sees them: its own copies where it placed members, else the originals."""

    def __init__(self, nodes: list[NodeState], copies: dict[int, NodeState]):
        self.nodes, self.copies = nodes, copies

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, index: int) -> NodeState:
        return self.copies.get(index) or self.nodes[index]

    def writable(self, index: int) -> NodeState:
        if index not in self.copies:
            self.copies[index] = self.nodes[index].copy()
        return self.copies[index]


def place(request: PlacementRequest, offers: list[NodeOffer], states: list[NodeState] | None = None) -> Plan:
    """Place every member of ``request`` or none.

    ``states`` (working copies from earlier ``place`` calls in the same round) lets several
    requests share one round of offers: a placeable request consumes from them, an unplaceable one
    leaves them untouched.
    """
    nodes = states if states is not None else [NodeState.of(o) for o in offers]
    # Copy-on-write: only nodes a member lands on are copied; others are read in place.
    copies: dict[int, NodeState] = {}
    trial = _View(nodes, copies)
    limit = _candidates(len(nodes))
    # Hardest members first: they have the fewest places to go.
    members = sorted(request.members, key=lambda m: (-sum(m.disks.values()), -(m.cpuset or 0), -m.cpus, -m.mem_mb,
                                                      m.member_id))
    placements, unplaced = [], {}
    count = len(nodes)
    # Each request starts its scan at its own (stable) place, so requests do not all wade through
    # the same full nodes first.
    cursor = zlib.crc32(request.cluster_id.encode()) % count if count else 0
    preferred_first = sorted(range(count), key=lambda i: nodes[i].name not in request.preferred_hosts) \
        if request.preferred_hosts else None
    for member in members:
        best, found, scanned = None, 0, 0
        while scanned < count and found < limit:
            index = preferred_first[scanned] if preferred_first else (cursor + scanned) % count
            scanned += 1
            node = trial[index]
            if infeasibility(node, member) is None:
                found += 1
                if best is None or score(node, request) > score(trial[best], request):
                    best = index
        if best is None:
            unplaced[member.member_id] = [r for r in (infeasibility(trial[i], member) for i in range(count)) if r] or \
                [Reason("*", "nodes", "no node is offering resources")]
            continue
        placements.append(trial.writable(best).take(request.cluster_id, member))
        cursor = (cursor + scanned) % max(count, 1)
    if unplaced:
        return Plan([], unplaced)
    if states is not None:
        for index, copy in copies.items():
            states[index] = copy
    return Plan(sorted(placements, key=lambda p: p.member_id), {})

