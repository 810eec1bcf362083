"""Bodies of the placement dry-run: a launch request whose members need no container yet, plus
(optionally) the node offers to place them on. They convert to the pure placement's dataclasses."""
from pydantic import BaseModel, Field, model_validator

from spindle_common.contracts import ClusterSpec, ContainerSpec, DiskClass, MemberSpec
from spindle_scheduler.placement import MemberRequest, NodeOffer, OfferedDisk, PlacementRequest


class OfferedDiskIn(BaseModel):
    disk_id: str = Field(min_length=1, max_length=4096, description="unique on its node (Mesos: MOUNT root)")
    disk_class: DiskClass
    size_mb: float = Field(default=0, ge=0)
    root: str = Field(default="", max_length=4096, description="mount point on the node")


class NodeOfferIn(BaseModel):
    node: str = Field(min_length=1, max_length=255)
    cpus: float = Field(ge=0, le=100_000)
    mem_mb: float = Field(ge=0)
    disks: list[OfferedDiskIn] = Field(default=[], max_length=1024)
    numa: dict[int, list[int]] = Field(default={}, description="free cpu ids per NUMA node")
    running: list[tuple[str, str]] = Field(default=[], description="(cluster id, role) of members already here")
    rack: str = Field(default="", max_length=63, description="its failure domain; empty: the node itself")

    @model_validator(mode="after")
    def each_disk_and_cpu_once(self) -> "NodeOfferIn":
        ids = [d.disk_id for d in self.disks]
        if len(ids) != len(set(ids)):
            raise ValueError(f"node {self.node}: disk ids must be unique")
        cpus = [c for cpu_ids in self.numa.values() for c in cpu_ids]
        if len(cpus) != len(set(cpus)) or any(c < 0 for c in cpus):
            raise ValueError(f"node {self.node}: NUMA cpu ids must be non-negative and each on one NUMA node")
        return self

    def offer(self) -> NodeOffer:
        return NodeOffer(self.node, self.cpus, self.mem_mb,
                         [OfferedDisk(d.disk_id, d.disk_class.value, d.size_mb, d.root) for d in self.disks],
                         dict(self.numa), list(self.running), self.rack)


class DryRunMemberIn(MemberSpec):
    """A member as in a launch; its container does not matter to placement."""

    container: ContainerSpec | None = None  # type: ignore[assignment]


class DryRunIn(ClusterSpec):
    # A pydantic field narrowed in a subclass (validated as dry-run members); mypy sees a list's invariance.
    members: list[DryRunMemberIn] = Field(min_length=1, max_length=1000)  # type: ignore[assignment]
    offers: list[NodeOfferIn] | None = Field(
        default=None, max_length=10_000, description="nodes to place on; omitted = the Mesos offers held now")

    @model_validator(mode="after")
    def unique_names(self) -> "DryRunIn":
        if len({m.member_id for m in self.members}) != len(self.members):
            raise ValueError("member ids must be unique")
        if self.offers is not None and len({o.node for o in self.offers}) != len(self.offers):
            raise ValueError("each node may appear in one offer only")
        return self

    def placement_request(self, extra_cpus: float = 0.0, extra_mem_mb: float = 0.0,
                          may_share: bool = False) -> PlacementRequest:
        """The request as placement sees it; ``extra_*`` is what each member's executor adds;
        ``may_share``: the platform has one node, so the replica roles share it."""
        return PlacementRequest(
            self.cluster_id,
            [MemberRequest(m.member_id, m.role, m.cpus + extra_cpus, m.mem_mb + extra_mem_mb,
                           {c.value: n for c, n in m.disks.items()}, m.cpuset)
             for m in self.members],
            self.strategy.value, list(self.preferred_hosts), list(self.anti_affinity_roles), list(self.excluded_hosts),
            list(self.replica_roles), may_share)
