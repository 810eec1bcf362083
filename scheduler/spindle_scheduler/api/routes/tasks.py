"""Launching, relaunching and killing cluster members as Mesos tasks (callers: orchestrator, admins)."""
from typing import Any

from fastapi import APIRouter, Path, Request, Response

from spindle_common.contracts import NAME_PATTERN, ClusterSpec, ContainerSpec, TaskView
from spindle_common.errors import ApiError, error_responses
from spindle_scheduler.api.deps import ServiceCaller, framework
from spindle_scheduler.mesos.launcher import new_task_id
from spindle_scheduler.models import Task
from spindle_scheduler.schemas import HandOverIn, RelaunchIn
from spindle_scheduler.store import task_view

router = APIRouter(tags=["tasks"])
ClusterId = Path(pattern=NAME_PATTERN)
MemberId = Path(pattern=NAME_PATTERN)


@router.post("/launches", status_code=202, responses=error_responses(401, 403, 409, 422, 503))
def launch(body: ClusterSpec, request: Request, _: ServiceCaller) -> list[TaskView]:
    """Queue a cluster's members (their floating IPs already held, in each member's lease); they
    launch on the next offers that fit them all."""
    fw = framework(request)
    if len({m.member_id for m in body.members}) != len(body.members):
        raise ApiError(422, "DUPLICATE_MEMBER", "member ids must be unique")
    existing = fw.store.by_cluster(body.cluster_id)
    if existing:
        raise ApiError(409, "CLUSTER_EXISTS", f"cluster {body.cluster_id} already has tasks",
                       {"tasks": [t.task_id for t in existing]})
    tasks = new_tasks(body)
    fw.store.add(tasks)
    fw.revive(request.app.state.driver)  # on the offers held now, then those declined before
    return [task_view(t) for t in tasks]


def new_tasks(body: ClusterSpec) -> list[Task]:
    """The members of ``body`` as PENDING tasks; each keeps the cluster's placement options (a member
    relaunched later is placed by them too)."""
    placement = body.model_dump(mode="json", include={"strategy", "preferred_hosts", "anti_affinity_roles",
                                                      "excluded_hosts", "replica_roles"})
    return [Task(task_id=new_task_id(m.member_id), cluster_id=body.cluster_id, member_id=m.member_id,
                 request={**m.model_dump(mode="json", exclude={"member_id"}, exclude_none=True), **placement,
                          "origin": body.origin},
                 state="PENDING", message="waiting for an offer", disk_roots=[], disks=[], launches=1,
                 kill_requested=False)
            for m in body.members]


@router.post("/clusters/{cluster_id}/members", status_code=202, responses=error_responses(401, 403, 404, 409, 422,
                                                                                          503))
def add_members(body: ClusterSpec, request: Request, response: Response, _: ServiceCaller,
                cluster_id: str = ClusterId) -> list[TaskView]:
    """Add members to a cluster that has tasks (a resize): placed together, all or nothing, with the
    cluster's members already running counted (spread, anti-affinity). Members it has already are a
    repeat: 200 with their tasks, nothing added."""
    fw = framework(request)
    if body.cluster_id != cluster_id:
        raise ApiError(422, "INVALID_REQUEST", "the body's cluster_id is not the path's")
    existing = {t.member_id: t for t in fw.store.by_cluster(cluster_id)}
    if not existing:
        raise ApiError(404, "NOT_FOUND", f"cluster {cluster_id} has no tasks")
    if len({m.member_id for m in body.members}) != len(body.members):
        raise ApiError(422, "DUPLICATE_MEMBER", "member ids must be unique")
    known = [m.member_id for m in body.members if m.member_id in existing]
    if known and len(known) != len(body.members):
        raise ApiError(409, "MEMBER_EXISTS", f"members {', '.join(known)} exist already", {"members": known})
    if known:
        response.status_code = 200
        return [task_view(existing[m]) for m in known]
    tasks = new_tasks(body)
    fw.store.add(tasks)
    fw.revive(request.app.state.driver)
    return [task_view(t) for t in tasks]


@router.post("/clusters/{cluster_id}/members/{member_id}/kill", status_code=202,
             responses=error_responses(401, 403, 404, 422, 503))
def kill_member(request: Request, _: ServiceCaller, cluster_id: str = ClusterId,
                member_id: str = MemberId) -> TaskView:
    """Kill one member's task (a resize removes it): its container goes and its disks are released
    and wiped. Killing an ended one changes nothing."""
    fw = framework(request)
    task = fw.kill_member(request.app.state.driver, cluster_id, member_id)
    if task is None:
        raise ApiError(404, "MEMBER_NOT_FOUND", f"cluster {cluster_id} has no member {member_id}")
    return task_view(task)


@router.put("/clusters/{cluster_id}/members/{member_id}/container", responses=error_responses(401, 403, 404, 422,
                                                                                                503))
def update_container(body: ContainerSpec, request: Request, _: ServiceCaller, cluster_id: str = ClusterId,
                     member_id: str = MemberId) -> TaskView:
    """The member's container as it is rendered now (a resize changed its peers): a relaunch of the
    member starts it so. The running container is not touched here."""
    task = framework(request).store.update_container(cluster_id, member_id, body.model_dump(mode="json",
                                                                                            exclude_none=True))
    if task is None:
        raise ApiError(404, "MEMBER_NOT_FOUND", f"cluster {cluster_id} has no member {member_id}")
    return task_view(task)


@router.get("/clusters", responses=error_responses(401, 403, 422, 503))
def unfinished_clusters(origin: str, request: Request, _: ServiceCaller) -> dict[str, int]:
    """Clusters launched by ``origin`` that still have tasks not terminal: cluster id → how many."""
    return framework(request).store.unfinished_clusters(origin)


@router.get("/clusters/{cluster_id}/tasks", responses=error_responses(401, 403, 422, 503))
def cluster_tasks(request: Request, _: ServiceCaller, cluster_id: str = ClusterId) -> list[TaskView]:
    """Every member task of the cluster (none: an empty list)."""
    return [task_view(t) for t in framework(request).store.by_cluster(cluster_id)]


@router.post("/clusters/{cluster_id}/members/{member_id}/relaunch", status_code=202,
             responses=error_responses(401, 403, 404, 409, 422, 503))
def relaunch_member(body: RelaunchIn, request: Request, response: Response, _: ServiceCaller,
                    cluster_id: str = ClusterId, member_id: str = MemberId) -> TaskView:
    """Launch a member whose task ended again, as a new task on fresh disks with its lease. A repeat
    (the member was relaunched since ``launches_seen``) changes nothing and answers 200."""
    fw = framework(request)
    task = fw.relaunch(request.app.state.driver, cluster_id, member_id, body.launches_seen, body.reason)
    if task is None:
        raise ApiError(404, "MEMBER_NOT_FOUND", f"cluster {cluster_id} has no member {member_id}")
    if task.launches == body.launches_seen:  # not relaunched: its task has not ended
        raise ApiError(409, "TASK_LIVE", f"member {member_id}'s task {task.task_id} is {task.state}; it has not ended",
                       {"state": task.state})
    if task.launches > body.launches_seen + 1 or task.state != "PENDING":
        response.status_code = 200
    return task_view(task)


def framework_of_cluster(request: Request, cluster_id: str):
    """The framework, once the cluster is known to have tasks; 404 NOT_FOUND otherwise."""
    fw = framework(request)
    if not fw.store.by_cluster(cluster_id):
        raise ApiError(404, "NOT_FOUND", f"cluster {cluster_id} has no tasks")
    return fw


@router.post("/clusters/{cluster_id}/kill", status_code=202, responses=error_responses(401, 403, 404, 422, 503))
def kill_cluster(request: Request, _: ServiceCaller, cluster_id: str = ClusterId) -> list[TaskView]:
    """Kill every task of the cluster (tasks not launched yet just end)."""
    fw = framework_of_cluster(request, cluster_id)
    fw.kill_cluster(request.app.state.driver, cluster_id)
    return [task_view(t) for t in fw.store.by_cluster(cluster_id)]


@router.post("/clusters/{cluster_id}/stop", status_code=202, responses=error_responses(401, 403, 404, 422, 503))
def stop_cluster(request: Request, _: ServiceCaller, cluster_id: str = ClusterId) -> list[TaskView]:
    """Kill the cluster's members keeping their disks held, data and all (their containers go), and
    its job drivers. Repeat-safe."""
    fw = framework_of_cluster(request, cluster_id)
    fw.stop_cluster(request.app.state.driver, cluster_id)
    return [task_view(t) for t in fw.store.by_cluster(cluster_id)]


@router.post("/clusters/{cluster_id}/start", status_code=202, responses=error_responses(401, 403, 404, 422, 503))
def start_cluster(request: Request, _: ServiceCaller, cluster_id: str = ClusterId) -> list[TaskView]:
    """Launch the ended members of a stopped cluster again, each on its node and disks (fresh disks
    for one that kept none), with the floating IP lease it had. Repeat-safe; 503 RELEASE_PENDING while
    a stopped container is still being removed."""
    fw = framework_of_cluster(request, cluster_id)
    return [task_view(t) for t in fw.start_cluster(request.app.state.driver, cluster_id)]


@router.post("/clusters/{cluster_id}/hand-over", responses=error_responses(401, 403, 404, 409, 422, 503))
def hand_over(body: HandOverIn, request: Request, _: ServiceCaller,
              cluster_id: str = ClusterId) -> dict[str, list[dict[str, Any]]]:
    """Give the kept disks of ended members to new owners (``owners``: member id → owner, e.g. a
    dataset's part), data and all; answers new owner → the disks it holds. 409 TASK_LIVE for a member
    that has not ended."""
    fw = framework_of_cluster(request, cluster_id)
    return fw.hand_over(cluster_id, body.owners)
