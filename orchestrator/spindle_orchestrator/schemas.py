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
                                      node=m.node, ip=m.ip, dns_name=m.dns_name, disks=m.disks, ports=m.ports)
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
