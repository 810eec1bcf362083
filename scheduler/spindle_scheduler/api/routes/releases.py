"""What ended tasks still owe (durable releases) and the sweep of disk holds (callers: admins, services)."""
from fastapi import APIRouter, Request

from spindle_common.errors import error_responses
from spindle_scheduler.api.deps import ServiceCaller, framework
from spindle_scheduler.schemas import OwedReleaseOut, ReleasesOut, SweepOut

router = APIRouter(tags=["releases"])


@router.get("/releases", responses=error_responses(401, 403, 503))
def releases(request: Request, _: ServiceCaller) -> ReleasesOut:
    """Releases owed by ended tasks (each retried until disk-service confirms) and what the sweeps freed."""
    fw = framework(request)
    sweeper = request.app.state.sweeper
    counts = fw.releases.counts()
    return ReleasesOut(owed=[OwedReleaseOut(task_id=t.task_id, member_id=t.member_id, attempts=t.release_attempts,
                                            error=t.release_error) for t in fw.store.owed_releases()],
                       released=counts["released"], failed_attempts=counts["failed_attempts"],
                       sweeps=sweeper.runs, swept_total=sweeper.freed_total,
                       last_sweep=SweepOut(**sweeper.last) if sweeper.last else None)


@router.post("/sweep", responses=error_responses(401, 403, 503))
def sweep(request: Request, _: ServiceCaller) -> SweepOut:
    """Sweep disk holds now: disks of owners whose task ended (or never launched) are released;
    holdings younger than the grace period, and owners without a task here, are left alone."""
    framework(request)
    return SweepOut(**request.app.state.sweeper.run())
