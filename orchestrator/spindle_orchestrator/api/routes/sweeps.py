"""The orchestrator's sweep of floating IPs (``sweeper.py``): its counts, and one run now (callers:
admins, services)."""
from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator.api.deps import ServiceCaller
from spindle_orchestrator.sweeper import IpSweeper

router = APIRouter(prefix="/internal/sweeps", tags=["internal"])


class IpSweepOut(BaseModel):
    at: str
    freed: list[str] = Field(description="owners whose IPs and DNS names were freed (their cluster or job is settled)")
    kept: int = Field(description="owners held past the grace period whose cluster or job is live")
    foreign: list[str] = Field(description="owners this orchestrator has no cluster or job for: left alone")


class SweepsOut(BaseModel):
    runs: int
    freed_total: int = Field(description="owners the sweeps of this process freed")
    last: IpSweepOut | None


def _sweeper(request: Request) -> IpSweeper:
    worker = getattr(request.app.state, "worker", None)
    if worker is None:
        raise ApiError(503, "NOT_READY", "the orchestrator's worker is not running")
    return worker.lifecycle.ip_sweeper


@router.get("", responses=error_responses(401, 403, 503))
def sweeps(request: Request, _: ServiceCaller) -> SweepsOut:
    """How many sweeps ran in this process, what they freed, and the last one's findings."""
    counts = _sweeper(request).counts()
    return SweepsOut(runs=counts["runs"], freed_total=counts["freed_total"],
                     last=IpSweepOut(**counts["last"]) if counts["last"] else None)


@router.post("", responses=error_responses(401, 403, 503))
def sweep_now(request: Request, _: ServiceCaller) -> IpSweepOut:
    """Sweep now: IPs (and DNS names) held past the grace period by members of DESTROYED or cleaned-up
    FAILED clusters, or by finished jobs, are freed; owners of live ones, or unknown here, are kept."""
    return IpSweepOut(**_sweeper(request).run())
