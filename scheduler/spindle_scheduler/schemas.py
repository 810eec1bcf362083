"""Request/response bodies of the scheduler's task API."""
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

DISK_CLASSES = ("hdd", "ssd", "nvme")
NAME = r"^[a-z0-9][a-z0-9.-]{0,127}$"


class HealthCheckIn(BaseModel):
    command: list[str] | None = None
    tcp_port: int | None = Field(default=None, ge=1, le=65535)
    timeout_seconds: float = Field(default=120, gt=0, le=3600)


class ContainerIn(BaseModel):
    image: str = Field(min_length=1)
    command: list[str] | None = None
    env: dict[str, str] = {}
    files: dict[str, str] = {}
    health: HealthCheckIn | None = None
    hostname: str | None = None


class MemberIn(BaseModel):
    member_id: str = Field(pattern=NAME)
    role: str = Field(min_length=1, max_length=64)
    cpus: float = Field(gt=0, le=512)
    mem_mb: int = Field(ge=16, le=4 * 1024 * 1024)
    disks: dict[str, int] = {}
    cpuset: int | None = Field(default=None, ge=1, description="dedicated cpus on one NUMA node")
    network_pool: str | None = None
    restart: Literal["never", "replace"] = Field(
        default="never", description="replace: if the member dies while running, launch it again on fresh disks "
                                     "with the same floating IP (up to 3 times)")
    container: ContainerIn

    @field_validator("disks")
    @classmethod
    def known_classes(cls, disks: dict[str, int]) -> dict[str, int]:
        for disk_class, count in disks.items():
            if disk_class not in DISK_CLASSES:
                raise ValueError(f"unknown disk class {disk_class!r} (known: {', '.join(DISK_CLASSES)})")
            if not 0 <= count <= 64:
                raise ValueError(f"disk count for {disk_class} must be 0–64")
        return disks


class LaunchIn(BaseModel):
    cluster_id: str = Field(pattern=NAME)
    strategy: str = Field(default="spread", pattern="^(spread|pack)$")
    preferred_hosts: list[str] = []
    members: list[MemberIn] = Field(min_length=1, max_length=1000)
    origin: str | None = Field(default=None, max_length=200,
                               description="who launched it (an orchestrator instance), to find its clusters again")


class TaskOut(BaseModel):
    task_id: str
    cluster_id: str
    member_id: str
    state: str
    message: str
    hostname: str | None
    disk_roots: list[str]
    ip: str | None
    replacements: int = Field(0, description="how often this member was launched again after dying")
    last_failure: str | None = Field(None, description="why the member was last replaced")

    @classmethod
    def of(cls, task: Any) -> "TaskOut":
        return cls(task_id=task.task_id, cluster_id=task.cluster_id, member_id=task.member_id, state=task.state,
                   message=task.message, hostname=task.hostname, disk_roots=task.disk_roots or [], ip=task.ip,
                   replacements=task.request.get("replacements", 0), last_failure=task.request.get("last_failure"))


class PlacedMemberOut(BaseModel):
    member_id: str
    node: str
    disks: list[str]
    cpus: list[int]


class NodeReasonOut(BaseModel):
    node: str
    constraint: str
    message: str


class UnplacedMemberOut(BaseModel):
    member_id: str
    nodes: list[NodeReasonOut]


class PlanOut(BaseModel):
    placeable: bool
    summary: str
    members: list[PlacedMemberOut]
    reasons: list[UnplacedMemberOut]

    @classmethod
    def of(cls, plan: Any) -> "PlanOut":
        return cls(placeable=plan.placeable, summary=plan.summary(),
                   members=[PlacedMemberOut(member_id=p.member_id, node=p.node, disks=p.disk_ids, cpus=p.cpu_ids)
                            for p in plan.placements],
                   reasons=[UnplacedMemberOut(member_id=m, nodes=[NodeReasonOut(node=r.node, constraint=r.constraint,
                                                                               message=r.message) for r in reasons])
                            for m, reasons in plan.unplaced.items()])
