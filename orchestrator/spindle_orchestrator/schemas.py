"""Bodies of the orchestrator's internal API (its caller is the api-server)."""
from typing import Any

from pydantic import BaseModel, Field

from spindle_common.contracts import (
    ClusterState,
    ClusterView,
    EventView,
    HeldDisk,
    MemberState,
    MemberView,
    Notice,
    PortSpec,
    Timestamp,
    as_utc,
)
from spindle_orchestrator.models import Cluster, Event


class ClusterCreate(BaseModel):
    owner: str = Field(min_length=1, max_length=64, description="the owner's username (a name)")
    owner_id: str = Field(min_length=1, max_length=64, description="the owner's stable id (who owns it)")
    product: str = Field(min_length=1, max_length=64)
    version: str = Field(min_length=1, max_length=32)
    options: dict[str, Any] = {}
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=128)


def cluster_view(c: Cluster) -> ClusterView:
    return ClusterView(id=c.id, owner=c.owner, owner_id=c.owner_id, product=c.product, version=c.version,
                       state=ClusterState(c.state),
                       reason_code=c.reason_code, reason=c.reason, options=c.options, created_at=as_utc(c.created_at),
                       updated_at=as_utc(c.updated_at),
                       members=[MemberView(member_id=m.member_id, role=m.role, state=MemberState(m.state),
                                           message=m.message, node=m.node, ip=m.ip, dns_name=m.dns_name,
                                           disks=[HeldDisk(**d) for d in m.disks],
                                           ports=[PortSpec(**p) for p in m.ports], replacements=m.replacements)
                                for m in c.members],
                       notices=[Notice(**n) for n in c.notices or ()])


def event_view(e: Event) -> EventView:
    return EventView(seq=e.seq, at=as_utc(e.at), member_id=e.member_id, step=e.step, state=e.state, message=e.message)


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
    created_at: Timestamp
    started_at: Timestamp | None
    finished_at: Timestamp | None
    stdout: str | None = None
    stderr: str | None = None

    @classmethod
    def of(cls, job: Any, logs: bool = False) -> "JobOut":
        return cls(id=job.id, cluster_id=job.cluster_id, owner=job.owner, state=job.state, main=job.main,
                   args=job.args, files=job.files, message=job.message, exit_code=job.exit_code, ip=job.ip,
                   created_at=as_utc(job.created_at), started_at=job.started_at and as_utc(job.started_at),
                   finished_at=job.finished_at and as_utc(job.finished_at),
                   stdout=job.stdout if logs else None, stderr=job.stderr if logs else None)
