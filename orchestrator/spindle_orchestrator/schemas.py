"""Bodies of the orchestrator's internal API (its caller is the api-server)."""
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from spindle_orchestrator.models import Cluster, Event


class ClusterCreate(BaseModel):
    owner: str = Field(min_length=1, max_length=64)
    product: str = Field(min_length=1, max_length=64)
    version: str = Field(min_length=1, max_length=32)
    options: dict[str, Any] = {}
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=128)


class MemberOut(BaseModel):
    member_id: str
    role: str
    state: str
    message: str
    node: str | None
    ip: str | None
    dns_name: str | None
    disks: list[dict[str, Any]]
    ports: list[dict[str, Any]]
    replacements: int = 0


class ClusterOut(BaseModel):
    id: str
    owner: str
    product: str
    version: str
    state: str
    reason_code: str | None
    reason: str | None
    options: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    members: list[MemberOut]

    @classmethod
    def of(cls, c: Cluster) -> "ClusterOut":
        return cls(id=c.id, owner=c.owner, product=c.product, version=c.version, state=c.state,
                   reason_code=c.reason_code, reason=c.reason, options=c.options, created_at=c.created_at,
                   updated_at=c.updated_at,
                   members=[MemberOut(member_id=m.member_id, role=m.role, state=m.state, message=m.message,
                                      node=m.node, ip=m.ip, dns_name=m.dns_name, disks=m.disks, ports=m.ports,
                                      replacements=m.replacements)
                            for m in c.members])


class ClusterPage(BaseModel):
    items: list[ClusterOut]
    next_page_token: str | None


class EventOut(BaseModel):
    seq: int
    at: datetime
    member_id: str | None
    step: str
    state: str
    message: str

    @classmethod
    def of(cls, e: Event) -> "EventOut":
        return cls(seq=e.seq, at=e.at, member_id=e.member_id, step=e.step, state=e.state, message=e.message)


class JobCreate(BaseModel):
    owner: str = Field(min_length=1, max_length=64)
    main: str = Field(min_length=1, max_length=128, description="the uploaded file the driver runs")
    args: list[str] = Field(default=[], max_length=256)
    files: dict[str, str] = Field(min_length=1, max_length=64, description="file name → base64 content")


class JobOut(BaseModel):
    id: str
    cluster_id: str
    owner: str
    state: str
    main: str
    args: list[str]
    files: list[str]
    message: str
    exit_code: int | None
    ip: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    stdout: str | None = None
    stderr: str | None = None

    @classmethod
    def of(cls, job: Any, logs: bool = False) -> "JobOut":
        return cls(id=job.id, cluster_id=job.cluster_id, owner=job.owner, state=job.state, main=job.main,
                   args=job.args, files=job.files, message=job.message, exit_code=job.exit_code, ip=job.ip,
                   created_at=job.created_at, started_at=job.started_at, finished_at=job.finished_at,
                   stdout=job.stdout if logs else None, stderr=job.stderr if logs else None)
