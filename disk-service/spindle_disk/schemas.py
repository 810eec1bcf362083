"""Request and response bodies of disk-service's API (the OpenAPI contract)."""
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from spindle_common import contracts
from spindle_common.contracts import DiskClass, DiskView, Timestamp

Name = Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
Owner = Annotated[str, Field(min_length=1, max_length=255)]
# A node's failure domain as admins name it: lowercase, like a DNS label (nodes.rack is 63 long).
RACK_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"
Rack = Annotated[str, Field(pattern=RACK_PATTERN, examples=["rack-1"])]
RACK_DESCRIPTION = "the node's failure domain (placement spreads replicas over racks); null: none, the node itself"


class NodeCreate(BaseModel):
    """A registration. Without a rack (as node agents register) a registered node's rack stays as it is."""

    name: str = Name
    address: str = Field(min_length=1, max_length=255)
    disk_root: str = Field(min_length=2, max_length=4096, pattern=r"^/.+")
    cpus: float | None = Field(default=None, gt=0)
    mem_mb: int | None = Field(default=None, gt=0)
    rack: Rack | None = Field(default=None, description=RACK_DESCRIPTION)


class NodeOut(NodeCreate):
    model_config = ConfigDict(from_attributes=True)
    id: int
    created_at: Timestamp
    last_seen_at: Timestamp | None = Field(default=None, description="the node agent's last heartbeat; null: never")
    failure_domain: str = Field(description="the node's rack, or its name when it has none")


class NodeUpdate(BaseModel):
    """An admin's change of a registered node: its rack (null clears it), nothing else."""

    model_config = ConfigDict(extra="forbid")
    rack: Rack | None = Field(description=RACK_DESCRIPTION)


class Heartbeat(BaseModel):
    """A node agent's sign of life."""

    agent_version: str | None = Field(default=None, max_length=64)


class DiscoverRequest(BaseModel):
    """``lsblk``: the node's ``lsblk --json`` output (required unless the node is this machine).
    ``classes``: class per disk, keyed by filesystem label, mount point, device path or serial."""

    lsblk: dict[str, Any] | None = None
    classes: dict[str, DiskClass] = {}


class IgnoredDeviceOut(BaseModel):
    device_path: str
    reason: str


class DiskOut(DiskView):
    """A disk as this service answers it, read from its row."""

    model_config = ConfigDict(extra="ignore", from_attributes=True)  # rows carry more than is answered


class DiscoverResult(BaseModel):
    registered: list[DiskOut]
    updated: list[DiskOut]
    ignored: list[IgnoredDeviceOut]


class DiskPage(BaseModel):
    items: list[DiskOut]
    next_page_token: str | None


class DiskUpdate(BaseModel):
    disk_class: DiskClass | None = None
    labels: dict[str, str] | None = None


class StateChangeRequest(BaseModel):
    reason: str | None = Field(default=None, max_length=1024)


class WipeResult(BaseModel):
    """A remote node's report on the wipe it ran for a released disk."""

    ok: bool
    reason: str | None = Field(default=None, max_length=1024)


class TransitionOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    disk_id: int
    from_state: str | None
    to_state: str
    actor: str
    owner: str | None
    reason: str | None
    at: Timestamp


class AllocationRequest(BaseModel):
    node: str = Name
    disk_class: DiskClass
    count: int = Field(ge=1, le=128)
    owner: str = Field(min_length=1, max_length=255)


class AllocationOut(BaseModel):
    owner: str
    node: str
    disks: list[DiskOut]


class ReleaseRequest(BaseModel):
    """Release every disk of ``owner``, exactly the disks in ``disk_ids``, or every disk of each of
    ``owners`` (one transaction; an owner holding nothing is skipped, so a repeat is harmless).
    Give exactly one of the three."""

    owner: str | None = Field(default=None, min_length=1, max_length=255)
    disk_ids: list[int] | None = Field(default=None, min_length=1, max_length=1024)
    owners: list[Owner] | None = Field(default=None, min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _exactly_one(self) -> "ReleaseRequest":
        given = [name for name in ("owner", "disk_ids", "owners") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of owner, disk_ids or owners (got {', '.join(given) or 'none'})")
        return self


class TransferMove(BaseModel):
    from_owner: Owner
    to_owner: Owner


class TransferRequest(BaseModel):
    """Hand every disk of each ``from_owner`` to its ``to_owner``, as they are (no wipe), all in one
    transaction. Each owner appears in at most one move."""

    moves: list[TransferMove] = Field(min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _each_owner_once(self) -> "TransferRequest":
        named = [o for m in self.moves for o in (m.from_owner, m.to_owner)]
        if len(named) != len(set(named)):
            raise ValueError("an owner appears in more than one move (or a move is from an owner to itself)")
        return self


class BatchAllocationItem(BaseModel):
    """``count`` disks of ``disk_class`` on ``node`` for ``owner`` (a cluster member)."""

    owner: Owner
    node: str = Name
    disk_class: contracts.DiskClass
    count: int = Field(ge=1, le=128)


class BatchAllocationRequest(BaseModel):
    """Every member of one cluster at once; a member appears once per disk class it needs, always
    on the same node."""

    requests: list[BatchAllocationItem] = Field(min_length=1, max_length=4096)

    @model_validator(mode="after")
    def _consistent(self) -> "BatchAllocationRequest":
        from spindle_disk.batch import Ask, check_consistent
        check_consistent([Ask(r.owner, r.node, r.disk_class.value, r.count) for r in self.requests])
        return self


class AllocatedDisk(BaseModel):
    """A disk an owner holds, as a launch needs it."""

    id: int
    node: str
    device_path: str
    mount_point: str
    disk_class: contracts.DiskClass
    size_bytes: int


class BatchAllocationOut(BaseModel):
    """owner → the disks that satisfy its requests (in request order, then by disk id)."""

    allocations: dict[str, list[AllocatedDisk]]
