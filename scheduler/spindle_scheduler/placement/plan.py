"""What placement decides: where each member goes, or — when the request cannot be placed — why
not, per member and per node, with a one-line summary for users."""
from collections import Counter
from dataclasses import dataclass

from spindle_scheduler.placement.model import Reason

# Up to this many nodes, the summary names every node; beyond it, it groups them by constraint.
LISTED_NODES = 5


@dataclass(frozen=True)
class Placement:
    """Where one member goes and what it gets there (its own whole disks and cpus)."""

    member_id: str
    node: str
    disk_ids: list[str]
    cpu_ids: list[int]  # dedicated cpus (empty unless the member asked for a cpuset)


@dataclass
class Plan:
    """All members placed (``placements``) or none (``unplaced`` says why)."""

    placements: list[Placement]
    # member id -> one reason per node that could not take it (only when not placeable)
    unplaced: dict[str, list[Reason]]

    @property
    def placeable(self) -> bool:
        return not self.unplaced

    def summary(self) -> str:
        """One line naming which resource was short on which node."""
        if self.placeable:
            return f"{len(self.placements)} member{'s' if len(self.placements) != 1 else ''} placed"
        member, reasons = next(iter(self.unplaced.items()))
        others = len(self.unplaced) - 1
        more = f" (and {others} more unplaceable member{'s' if others > 1 else ''})" if others else ""
        return f"{member} fits no node: {explain(reasons)}{more}"


def explain(reasons: list[Reason]) -> str:
    """Every node's reason when there are few; else per constraint, how many nodes and an example."""
    if len(reasons) <= LISTED_NODES:
        return "; ".join(str(r) for r in reasons)
    counts = Counter(r.constraint for r in reasons)
    example: dict[str, Reason] = {}
    for reason in reasons:
        example.setdefault(reason.constraint, reason)
    return "; ".join(f"{count} of {len(reasons)} nodes short on {constraint}, e.g. {example[constraint]}"
                     for constraint, count in counts.most_common())
