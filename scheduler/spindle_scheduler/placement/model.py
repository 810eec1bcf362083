"""The plain data placement works on: what nodes offer, what a cluster asks for, why a node says no.

Plain dataclasses with documented fields, so any backend converts to them in a few lines (Mesos:
one ``NodeOffer`` per offer, one ``OfferedDisk`` per MOUNT disk resource).
"""
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class OfferedDisk:
    """One free whole disk; it goes to one member, never shared."""

    disk_id: str  # unique on its node; in Mesos terms the MOUNT root works
    disk_class: str  # hdd | ssd | nvme
    size_mb: float = 0.0
    root: str = ""  # where it is mounted on the node (Mesos MOUNT ``root``)


@dataclass
class NodeOffer:
    """What one node has free now."""

    node: str  # the node's id (Mesos: the agent's hostname); names it in plans and reasons
    cpus: float
    mem_mb: float
    disks: list[OfferedDisk] = field(default_factory=list)
    # Free cpu ids per NUMA node, for members that want a dedicated cpuset.
    numa: dict[int, list[int]] = field(default_factory=dict)
    # Members already running here as (cluster id, role): spread and anti-affinity count them.
    running: list[tuple[str, str]] = field(default_factory=list)
    # Its failure domain (the inventory's rack); "" = the node itself. Members kept apart spread over
    # racks first.
    rack: str = ""


@dataclass(frozen=True)
class MemberRequest:
    """One cluster member's needs."""

    member_id: str
    role: str
    cpus: float
    mem_mb: float
    disks: dict[str, int] = field(default_factory=dict)  # class -> count of whole disks
    cpuset: int | None = None  # dedicated cpus, all on one NUMA node
    # Kept disks (a stopped member started again, a dataset attached): the member goes to this node
    # and gets exactly these disk ids, in this order, instead of ``disks``.
    pinned_node: str | None = None
    pinned_disks: tuple[str, ...] = ()


@dataclass
class PlacementRequest:
    """All members of one cluster, placed together or not at all."""

    cluster_id: str
    members: list[MemberRequest]
    strategy: str = "spread"  # spread (members of one cluster on different nodes) | pack
    preferred_hosts: list[str] = field(default_factory=list)  # win over strategy when they fit
    # Roles whose members must each be on a different node (hard: a node never takes two, counting
    # the cluster's members already running there, ``NodeOffer.running``).
    anti_affinity_roles: list[str] = field(default_factory=list)
    excluded_hosts: list[str] = field(default_factory=list)  # never used (each says so: constraint "excluded")
    # Roles whose members hold copies of each other's data: kept apart as ``anti_affinity_roles`` are,
    # unless ``replicas_may_share`` (a one-node platform, where they cannot be apart).
    replica_roles: list[str] = field(default_factory=list)
    replicas_may_share: bool = False

    def apart(self, role: str) -> bool:
        """Members of ``role`` must each be on a different node (and spread over racks first)."""
        return role in self.anti_affinity_roles or (role in self.replica_roles and not self.replicas_may_share)


@dataclass(frozen=True)
class Reason:
    """Why ``node`` cannot take a member: machine-readable constraint, human message."""

    node: str
    constraint: str  # excluded | pinned | cpus | mem | disks | cpuset | anti_affinity | nodes
    message: str

    def __str__(self) -> str:
        return f"{self.node}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return asdict(self)
