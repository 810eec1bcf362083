"""Bodies of the scheduler's API besides the shared contracts (launches are ``ClusterSpec``, tasks
``TaskView``, both in ``spindle_common.contracts``): relaunches and placement plans."""
from typing import Any

from pydantic import BaseModel, Field


class RelaunchIn(BaseModel):
    launches_seen: int = Field(ge=1, description="the member's launch count the caller saw; a repeat is a no-op")
    reason: str = Field(default="", max_length=1000)


class HandOverIn(BaseModel):
    owners: dict[str, str] = Field(min_length=1, max_length=1000,
                                   description="member id → the owner its kept disks go to")


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


class OwedReleaseOut(BaseModel):
    task_id: str
    member_id: str
    attempts: int
    error: str


class SweepOut(BaseModel):
    at: str
    freed: list[str] = Field(description="owners whose disks were freed, or released again, by this sweep")
    owed: list[str] = Field(description="owners whose ended task still owes its release (the release worker's)")
    live: int
    recent: int = Field(description="owners held for less than the grace period: judged next time")
    foreign: list[str] = Field(description="owners this scheduler has no task for: left alone")


class ReleasesOut(BaseModel):
    owed: list[OwedReleaseOut]
    released: int = Field(description="owed releases this process completed")
    failed_attempts: int
    sweeps: int
    swept_total: int = Field(description="owners the sweeps of this process freed")
    last_sweep: SweepOut | None
