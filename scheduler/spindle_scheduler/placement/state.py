"""A node's resources as they shrink while members are placed on it (a working copy of its offer)."""
from dataclasses import dataclass, field

from spindle_scheduler.placement.model import MemberRequest, NodeOffer
from spindle_scheduler.placement.plan import Placement


@dataclass
class NodeState:
    name: str
    cpus: float
    mem_mb: float
    total_cpus: float
    total_mem_mb: float
    disks: dict[str, list[str]]  # class -> free disk ids
    numa: dict[int, list[int]]  # NUMA node -> free cpu ids
    members_of: dict[str, int] = field(default_factory=dict)  # cluster id -> members here
    roles: set[tuple[str, str]] = field(default_factory=set)  # (cluster id, role) of members here
    rack: str = ""  # its failure domain; "" = the node itself

    @classmethod
    def of(cls, offer: NodeOffer) -> "NodeState":
        disks: dict[str, list[str]] = {}
        for disk in sorted(offer.disks, key=lambda d: d.disk_id):
            disks.setdefault(disk.disk_class, []).append(disk.disk_id)
        members_of: dict[str, int] = {}
        for cluster_id, _ in offer.running:
            members_of[cluster_id] = members_of.get(cluster_id, 0) + 1
        return cls(offer.node, offer.cpus, offer.mem_mb, offer.cpus, offer.mem_mb, disks,
                   {n: sorted(c) for n, c in offer.numa.items()}, members_of, set(offer.running),
                   offer.rack or offer.node)

    def copy(self) -> "NodeState":
        return NodeState(self.name, self.cpus, self.mem_mb, self.total_cpus, self.total_mem_mb,
                         {c: list(ids) for c, ids in self.disks.items()}, {k: list(v) for k, v in self.numa.items()},
                         dict(self.members_of), set(self.roles), self.rack)

    def take(self, cluster_id: str, member: MemberRequest) -> Placement:
        """Consume the member's share (assumes it is feasible) and say what it got."""
        self.cpus -= member.cpus
        self.mem_mb -= member.mem_mb
        disk_ids: list[str] = []
        if member.pinned_node:  # exactly its kept disks, in their order
            disk_ids = list(member.pinned_disks)
            self.disks = {c: [d for d in ids if d not in member.pinned_disks] for c, ids in self.disks.items()}
        for disk_class, count in sorted(member.disks.items()) if not member.pinned_node else ():
            if not count:
                continue
            disk_ids += self.disks[disk_class][:count]
            del self.disks[disk_class][:count]
        cpu_ids: list[int] = []
        if member.cpuset:
            # The NUMA node with the fewest free cpus that still fits: keeps big ones for big asks.
            numa = min((n for n, c in self.numa.items() if len(c) >= member.cpuset),
                       key=lambda n: (len(self.numa[n]), n))
            cpu_ids, self.numa[numa] = self.numa[numa][:member.cpuset], self.numa[numa][member.cpuset:]
        self.members_of[cluster_id] = self.members_of.get(cluster_id, 0) + 1
        self.roles.add((cluster_id, member.role))
        return Placement(member.member_id, self.name, disk_ids, cpu_ids)
