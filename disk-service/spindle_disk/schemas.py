"""Request and response bodies of disk-service's API (the OpenAPI contract)."""
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DiskClass = Literal["hdd", "ssd", "nvme"]
DiskState = Literal["free", "allocated", "wiping", "failed", "retired"]
Name = Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class NodeCreate(BaseModel):
    name: str = Name
    address: str = Field(min_length=1, max_length=255)
    disk_root: str = Field(min_length=2, max_length=4096, pattern=r"^/.+")
    cpus: float | None = Field(default=None, gt=0)
    mem_mb: int | None = Field(default=None, gt=0)


class NodeOut(NodeCreate):
    model_config = ConfigDict(from_attributes=True)
    id: int
    created_at: datetime


class DiscoverRequest(BaseModel):
    """``lsblk``: the node's ``lsblk --json`` output (required unless the node is this machine).
    ``classes``: class per disk, keyed by filesystem label, mount point, device path or serial."""

    lsblk: dict[str, Any] | None = None
    classes: dict[str, DiskClass] = {}


class IgnoredDeviceOut(BaseModel):
    device_path: str
    reason: str


class DiskOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)
    id: int
    node: str
    device_path: str
    serial: str | None
    model: str | None
    transport: str | None
    size_bytes: int
    rotational: bool
    mount_point: str
    fs_type: str | None
    fs_label: str | None
    disk_class: DiskClass
    labels: dict[str, Any]
    state: DiskState
    state_reason: str | None
    owner: str | None
    updated_at: datetime


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
    at: datetime


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
    """Release every disk of ``owner``, or exactly the disks in ``disk_ids``."""

    owner: str | None = Field(default=None, min_length=1, max_length=255)
    disk_ids: list[int] | None = Field(default=None, min_length=1, max_length=1024)
