"""Job drivers as Mesos tasks of their cluster (caller: the orchestrator's job runner).

A job's driver is one more task of the cluster, member id ``job-<job id>``, placed on offers like
a member (its cpus and memory count) but on its own: it never waits for, nor holds up, the
cluster's members. It holds no disks; its floating IP arrives held, in its lease. Its executor
fetches the job's files from the orchestrator and puts the result back before the task ends."""
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response
from pydantic import Field
from sqlalchemy.exc import IntegrityError

from spindle_common.auth import Caller, require
from spindle_common.contracts import NAME_PATTERN, ContainerSpec, IpLease, Model, TaskView
from spindle_common.errors import ApiError, error_responses
from spindle_scheduler.api.deps import framework
from spindle_scheduler.mesos.launcher import JOB, job_member_id, new_task_id
from spindle_scheduler.models import Task
from spindle_scheduler.store import task_view

router = APIRouter(tags=["jobs"])
ClusterId = Path(pattern=NAME_PATTERN)
JobId = Path(pattern=NAME_PATTERN)
# Only services (the orchestrator) start and kill drivers; users do it through the orchestrator.
ServiceOnly = Annotated[Caller, Depends(require("service"))]


class JobTaskIn(Model):
    """A job's driver, as the orchestrator hands it over."""

    job_id: str = Field(pattern=NAME_PATTERN, max_length=120)
    cpus: float = Field(gt=0, le=512, description="what the driver holds in offers")
    cpu_limit: float | None = Field(default=None, gt=0, le=512, description="its container's cpu cap (default: cpus)")
    mem_mb: int = Field(ge=16, le=4 * 1024 * 1024)
    container: ContainerSpec
    lease: IpLease | None = Field(default=None, description="the driver's floating IP, held by the orchestrator")
    orchestrator_url: str = Field(min_length=1, max_length=500,
                                  description="where the executor gets the job's files and puts its result")
    origin: str | None = Field(default=None, max_length=200)


def job_request(body: JobTaskIn) -> dict[str, Any]:
    """The task's ``request`` (what the launcher reads): no disks, kind job."""
    return {"kind": JOB, "job_id": body.job_id, "cpus": body.cpus, "cpu_limit": body.cpu_limit,
            "mem_mb": body.mem_mb, "disks": {}, "container": body.container.model_dump(mode="json"),
            "lease": body.lease.model_dump(mode="json") if body.lease else None,
            "orchestrator_url": body.orchestrator_url, "origin": body.origin}


def _existing(task: Task, cluster_id: str, request: dict[str, Any], response: Response) -> TaskView:
    if task.cluster_id != cluster_id or task.request != request:
        raise ApiError(409, "JOB_EXISTS", f"job {request['job_id']} already has a driver task with another request",
                       {"task_id": task.task_id, "cluster_id": task.cluster_id})
    response.status_code = 200
    return task_view(task)


@router.post("/clusters/{cluster_id}/jobs", status_code=202, responses=error_responses(401, 403, 404, 409, 422, 503))
def launch_job(body: JobTaskIn, request: Request, response: Response, _: ServiceOnly,
               cluster_id: str = ClusterId) -> TaskView:
    """Queue a job's driver as a task of the cluster; it launches on the next offer that fits it.
    Asking again with the same body answers the task (200); with another body 409 ``JOB_EXISTS``."""
    fw = framework(request)
    wanted = job_request(body)
    member_id = job_member_id(body.job_id)
    existing = fw.store.get_member(cluster_id, member_id)
    if existing is not None:
        return _existing(existing, cluster_id, wanted, response)
    members = [t for t in fw.store.by_cluster(cluster_id) if t.request.get("kind", "member") != JOB]
    if not members:
        raise ApiError(404, "CLUSTER_NOT_FOUND", f"cluster {cluster_id} has no tasks to run a job against")
    if any(t.kill_requested for t in members):
        raise ApiError(409, "CLUSTER_KILLED", f"cluster {cluster_id}'s tasks are being killed")
    task = Task(task_id=new_task_id(member_id), cluster_id=cluster_id, member_id=member_id, request=wanted,
                state="PENDING", message="waiting for an offer", disk_roots=[], disks=[], launches=1,
                kill_requested=False)
    try:
        fw.store.add([task])
    except IntegrityError:  # the same job asked for twice at once (or its id is another cluster's)
        again = fw.store.get_member(cluster_id, member_id)
        if again is None:
            raise ApiError(409, "JOB_EXISTS", f"member id {member_id} is taken") from None
        return _existing(again, cluster_id, wanted, response)
    fw.revive(request.app.state.driver)  # on the offers held now, then those declined before
    return task_view(task)


@router.post("/clusters/{cluster_id}/jobs/{job_id}/kill", status_code=202,
             responses=error_responses(401, 403, 404, 422, 503))
def kill_job(request: Request, _: ServiceOnly, cluster_id: str = ClusterId, job_id: str = JobId) -> TaskView:
    """Kill a job's driver task (one not launched yet just ends); its executor puts back what the
    driver wrote before the task ends. Killing an ended one changes nothing."""
    fw = framework(request)
    task = fw.kill_member(request.app.state.driver, cluster_id, job_member_id(job_id))
    if task is None:
        raise ApiError(404, "JOB_NOT_FOUND", f"cluster {cluster_id} has no driver task for job {job_id}")
    return task_view(task)
