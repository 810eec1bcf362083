"""Launching and killing cluster members as Mesos tasks (callers: orchestrator, admins)."""
from fastapi import APIRouter, Request

from spindle_common.errors import ApiError
from spindle_scheduler.api.deps import ServiceCaller, framework
from spindle_scheduler.mesos.launcher import new_task_id
from spindle_scheduler.models import Task
from spindle_scheduler.schemas import LaunchIn, TaskOut

router = APIRouter(tags=["tasks"])


@router.post("/launches", status_code=202)
def launch(body: LaunchIn, request: Request, _: ServiceCaller) -> list[TaskOut]:
    """Queue a cluster's members; they launch on the next offers that fit them all."""
    fw = framework(request)
    if len({m.member_id for m in body.members}) != len(body.members):
        raise ApiError(422, "DUPLICATE_MEMBER", "member ids must be unique")
    existing = fw.store.by_cluster(body.cluster_id)
    if existing:
        raise ApiError(409, "CLUSTER_EXISTS", f"cluster {body.cluster_id} already has tasks",
                       {"tasks": [t.task_id for t in existing]})
    tasks = [Task(task_id=new_task_id(m.member_id), cluster_id=body.cluster_id, member_id=m.member_id,
                  request={**m.model_dump(exclude={"member_id"}), "strategy": body.strategy,
                           "preferred_hosts": body.preferred_hosts, "origin": body.origin},
                  state="PENDING", message="waiting for an offer", disk_roots=[], kill_requested=False)
             for m in body.members]
    fw.store.add(tasks)
    request.app.state.driver.reviveOffers()  # offers declined before (refuse_seconds) come back now
    return [TaskOut.of(t) for t in tasks]


@router.get("/clusters")
def unfinished_clusters(origin: str, request: Request, _: ServiceCaller) -> dict[str, int]:
    """Clusters launched by ``origin`` that still have tasks not terminal: cluster id → how many."""
    return framework(request).store.unfinished_clusters(origin)


@router.get("/clusters/{cluster_id}/tasks")
def cluster_tasks(cluster_id: str, request: Request, _: ServiceCaller) -> list[TaskOut]:
    return [TaskOut.of(t) for t in framework(request).store.by_cluster(cluster_id)]


@router.post("/clusters/{cluster_id}/kill", status_code=202)
def kill_cluster(cluster_id: str, request: Request, _: ServiceCaller) -> list[TaskOut]:
    fw = framework(request)
    if not fw.store.by_cluster(cluster_id):
        raise ApiError(404, "NOT_FOUND", f"cluster {cluster_id} has no tasks")
    fw.kill_cluster(request.app.state.driver, cluster_id)
    return [TaskOut.of(t) for t in fw.store.by_cluster(cluster_id)]
