"""The plain data placement works on."""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class OfferedDisk:
    disk_id: str  # in Mesos terms the MOUNT root; any stable id works
    disk_class: str  # hdd | ssd | nvme


@dataclass
class NodeOffer:
    """What one node has free now."""

    node: str
    cpus: float
    mem_mb: float
    disks: list[OfferedDisk] = field(default_factory=list)
    # Free cpu ids per NUMA node, for members that want a dedicated cpuset.
    numa: dict[int, list[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class MemberRequest:
    member_id: str
    role: str
    cpus: float
    mem_mb: float
    disks: dict[str, int] = field(default_factory=dict)  # class -> count of whole disks
    cpuset: int | None = None  # dedicated cpus, all on one NUMA node


@dataclass
class PlacementRequest:
    cluster_id: str
    members: list[MemberRequest]
    strategy: str = "spread"  # spread | pack
    preferred_hosts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reason:
    """Why ``node`` cannot take a member: machine-readable constraint, human message."""

    node: str
    constraint: str  # cpus | mem | disks | cpuset
    message: str

    def __str__(self) -> str:
        return f"{self.node}: {self.message}"


@dataclass(frozen=True)
class Placement:
    member_id: str
    node: str
    disk_ids: list[str]
    cpu_ids: list[int]


@dataclass
class Plan:
    placements: list[Placement]
    # member id -> one reason per node that could not take it (only when not placeable)
    unplaced: dict[str, list[Reason]]

    @property
    def placeable(self) -> bool:
        return not self.unplaced

    def summary(self) -> str:
        """One line naming which resource was short on which node."""
        if self.placeable:
            return f"{len(self.placements)} members placed"
        member, reasons = next(iter(self.unplaced.items()))
        shown = "; ".join(str(r) for r in reasons[:5]) + (f"; … {len(reasons) - 5} more nodes" if len(reasons) > 5 else "")
        return f"{member} fits no node: {shown}"
