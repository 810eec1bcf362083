"""The scheduler's state in PostgreSQL: its FrameworkID and every member task.

Every change of a task notifies ``spindle_tasks`` with its cluster id in the same transaction, so
the orchestrator hears of it as soon as it is committed (and never of a change rolled back)."""
from collections.abc import Callable, Collection
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from spindle_common.contracts import TERMINAL_TASK_STATES, HeldDisk, MemberState, TaskView, as_utc
from spindle_common.errors import ApiError
from spindle_common.notify import TASKS, notify
from spindle_scheduler.models import FrameworkRecord, Task

FRAMEWORK_NAME = "spindle"
TERMINAL_STATES = frozenset(s.value for s in TERMINAL_TASK_STATES)
# A member is launched again once its task ended, or while its node is unreachable (replaced elsewhere).
RELAUNCHABLE_STATES = TERMINAL_STATES | {"TASK_UNREACHABLE"}
# A member on its node, holding its share there (what placement counts as already running).
PLACED_STATES = frozenset({"LAUNCHING", "TASK_STAGING", "TASK_STARTING", "TASK_RUNNING"})
# What a task entering a terminal state owes, written with that state (the outbox of its release).
OWED: dict[str, Any] = {"release_owed": True, "release_attempts": 0, "release_error": "", "released_at": None}
# The end of a container its own node reported (it exited): a ``restart: in_place`` member keeps its
# disks across it. Other ends (lost, gone, unknown, dropped) may mean the node is gone: fresh disks.
ENDED_ON_ITS_NODE = frozenset({"TASK_FAILED", "TASK_FINISHED"})


def kept(task: Task) -> bool:
    """An ended member whose disks stay held across its end (``Task.keep_disks``)."""
    return bool(task.keep_disks and task.state in TERMINAL_STATES and task.disk_roots)


def restarts_in_place(task: Task) -> bool:
    """A member whose product asks to start it again on its own disks (``restart: in_place``)."""
    return task.request.get("restart") == "in_place" and is_member(task)


def pinned(task: Task) -> bool:
    """A task to be placed on its kept disks (they are held for it while it waits)."""
    return bool(task.request.get("pin"))


def is_member(task: Task) -> bool:
    return task.request.get("kind", "member") == "member"


def task_view(task: Task) -> TaskView:
    return TaskView(task_id=task.task_id, cluster_id=task.cluster_id, member_id=task.member_id,
                    state=MemberState(task.state), message=task.message, hostname=task.hostname,
                    disks=[HeldDisk(**d) for d in task.disks or []], ip=task.ip, launches=task.launches,
                    kill_requested=task.kill_requested, disks_kept=kept(task),
                    pinned_to=task.request["pin"]["node"] if pinned(task) else None,
                    updated_at=as_utc(task.updated_at) if task.updated_at else None,
                    kind=task.request.get("kind", "member"))


class TaskStore:
    def __init__(self, sessions: sessionmaker[Session]):
        self.sessions = sessions

    def framework_id(self) -> str | None:
        with self.sessions() as session:
            record = session.get(FrameworkRecord, FRAMEWORK_NAME)
            return record.framework_id if record else None

    def save_framework_id(self, framework_id: str) -> None:
        with self.sessions.begin() as session:
            session.merge(FrameworkRecord(name=FRAMEWORK_NAME, framework_id=framework_id))

    def add(self, tasks: list[Task]) -> None:
        with self.sessions.begin() as session:
            session.add_all(tasks)
            for cluster_id in {t.cluster_id for t in tasks}:
                notify(session, TASKS, cluster_id)

    def get(self, task_id: str) -> Task | None:
        with self.sessions() as session:
            return session.get(Task, task_id)

    def get_member(self, cluster_id: str, member_id: str) -> Task | None:
        with self.sessions() as session:
            return session.scalar(select(Task).where(Task.cluster_id == cluster_id, Task.member_id == member_id))

    def by_cluster(self, cluster_id: str) -> list[Task]:
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.cluster_id == cluster_id).order_by(Task.member_id)))

    def by_members(self, member_ids: Collection[str]) -> list[Task]:
        if not member_ids:
            return []
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.member_id.in_(list(member_ids)))))

    def in_states(self, *states: str) -> list[Task]:
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.state.in_(states)).order_by(Task.task_id)))

    def live(self) -> list[Task]:
        """Tasks that may hold resources: launched and not yet terminal."""
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.state.not_in(TERMINAL_STATES | {"PENDING"}))))

    def running_members(self, cluster_id: str, exclude: Collection[str] = ()) -> list[Task]:
        """The cluster's members placed on a node and not ended (launching, staging, starting, running),
        except the tasks ``exclude`` names and job drivers: what placement counts on their nodes."""
        with self.sessions() as session:
            tasks = session.scalars(select(Task).where(Task.cluster_id == cluster_id, Task.state.in_(PLACED_STATES)))
            return [t for t in tasks if t.task_id not in exclude and t.request.get("kind", "member") == "member"]

    def unfinished_clusters(self, origin: str) -> dict[str, int]:
        """Cluster id → tasks not yet terminal (launched or waiting), of clusters launched by ``origin``."""
        with self.sessions() as session:
            tasks = session.scalars(select(Task).where(Task.state.not_in(TERMINAL_STATES)))
            counts: dict[str, int] = {}
            for task in tasks:
                if task.request.get("origin") == origin:
                    counts[task.cluster_id] = counts.get(task.cluster_id, 0) + 1
            return counts

    def set(self, task_id: str, **fields: Any) -> None:
        """Change a task; a terminal state records, in the same transaction, the release it owes (of
        its container only, its disks kept, for a ``restart: in_place`` member whose container ended
        on its node unasked: it starts there again on them). A change to what the task already is (an
        update the master sent again, not acknowledged in time) writes and notifies nothing."""
        with self.sessions.begin() as session:
            task = session.scalar(select(Task).where(Task.task_id == task_id).with_for_update())
            if task is None or all(getattr(task, name) == value for name, value in fields.items()):
                return
            if fields.get("state") in TERMINAL_STATES:
                fields = {**fields, **OWED}
                if fields["state"] in ENDED_ON_ITS_NODE and restarts_in_place(task) and not task.kill_requested \
                        and task.disk_roots:
                    fields["keep_disks"] = True
            for name, value in fields.items():
                setattr(task, name, value)
            notify(session, TASKS, task.cluster_id)

    # --- releases ended tasks owe (``mesos/releases.py``) ---------------------------------------------
    def owed_releases(self) -> list[Task]:
        """Ended tasks whose container and disks are not confirmed released yet, oldest first."""
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.release_owed).order_by(Task.updated_at)))

    def release_done(self, task_id: str) -> bool:
        """disk-service confirmed the release of ``task_id``'s disks; False if it owed none (any more)."""
        with self.sessions.begin() as session:
            return session.scalar(update(Task).where(Task.task_id == task_id, Task.release_owed)
                                  .values(release_owed=False, release_error="", released_at=func.now())
                                  .returning(Task.task_id)) is not None

    def release_failed(self, task_id: str, error: str) -> int:
        """One more failed attempt at ``task_id``'s owed release; returns how many failed so far."""
        with self.sessions.begin() as session:
            return session.scalar(update(Task).where(Task.task_id == task_id, Task.release_owed)
                                  .values(release_attempts=Task.release_attempts + 1, release_error=error[:2000])
                                  .returning(Task.release_attempts)) or 0

    def owe_release_again(self, member_ids: Collection[str]) -> list[str]:
        """The sweep found disks still held by these members' ended tasks: they owe their release again.
        Only tasks still ended (not relaunched meanwhile) are marked; returns their member ids."""
        if not member_ids:
            return []
        with self.sessions.begin() as session:
            return list(session.scalars(update(Task).where(Task.member_id.in_(list(member_ids)),
                                                           Task.state.in_(TERMINAL_STATES), ~Task.release_owed)
                                        .values(**OWED).returning(Task.member_id)))

    def relaunch(self, cluster_id: str, member_id: str, new_task_id: str, launches_seen: int,
                 message: str) -> Task | None:
        """The member's ended (or unreachable) task becomes a new PENDING task (Mesos never reuses task ids), once:
        a repeat with the same ``launches_seen`` changes nothing. On the disks it kept (``restart:
        in_place``), pinned to them on its node; else a replacement on fresh disks. None if the
        member is unknown; the task as it is if it has not ended (the caller refuses that)."""
        with self.sessions.begin() as session:
            task = session.scalar(select(Task).where(Task.cluster_id == cluster_id, Task.member_id == member_id)
                                  .with_for_update())
            if task is None or task.launches != launches_seen or task.state not in RELAUNCHABLE_STATES:
                return task
            if task.release_owed:  # its owner name would hold new disks that the old release then frees
                raise release_pending(task)
            task.launches += 1
            request = _placed_on_kept_disks(task)
            in_place = "pin" in request
            if in_place:
                message = f"{message} (in place on node {task.hostname}, its disks kept)"
            task.request, task.keep_disks = request, False  # its next end decides again
            return _pending_again(session, task, new_task_id, message[:2000], keep_place=in_place)

    def requeue(self, task_id: str, new_task_id: str, message: str) -> Task | None:
        """A launch the master dropped before it reached a node (the offer it used was no longer
        valid): the same launch is PENDING again under a new id, to be placed afresh (its launch
        count unchanged: for the orchestrator nothing ended). None, changing nothing, unless the task
        is still LAUNCHING and no kill was asked for."""
        with self.sessions.begin() as session:
            task = session.scalar(select(Task).where(Task.task_id == task_id).with_for_update())
            if task is None or task.state != "LAUNCHING" or task.kill_requested:
                return None
            return _pending_again(session, task, new_task_id, message, keep_place=pinned(task))

    def request_kill_member(self, cluster_id: str, member_id: str) -> Task | None:
        """Mark one task (e.g. a job's driver) to be killed; None if the cluster has no such member."""
        with self.sessions.begin() as session:
            task = session.scalar(select(Task).where(Task.cluster_id == cluster_id, Task.member_id == member_id)
                                  .with_for_update())
            if task is None:
                return None
            task.kill_requested = True
            _keep_no_more(task)
            notify(session, TASKS, cluster_id)
            task_id = task.task_id
        return self.get(task_id)

    def request_kill(self, cluster_id: str) -> list[Task]:
        """Every task of the cluster is to be killed; ended members that kept their disks (a stopped
        cluster) keep them no more: they owe their release now."""
        with self.sessions.begin() as session:
            session.execute(update(Task).where(Task.cluster_id == cluster_id).values(kill_requested=True))
            for task in session.scalars(select(Task).where(Task.cluster_id == cluster_id, Task.keep_disks)):
                _keep_no_more(task)
            notify(session, TASKS, cluster_id)
        return self.by_cluster(cluster_id)

    def request_stop(self, cluster_id: str) -> list[Task]:
        """The cluster's members not ended yet are to be killed keeping their disks (job drivers just
        killed). Returns the tasks."""
        with self.sessions.begin() as session:
            for task in session.scalars(select(Task).where(Task.cluster_id == cluster_id)):
                if task.state not in TERMINAL_STATES:
                    task.kill_requested = True
                    task.keep_disks = is_member(task)
            notify(session, TASKS, cluster_id)
        return self.by_cluster(cluster_id)

    def start(self, cluster_id: str, new_task_id: Callable[[str], str]) -> list[Task]:
        """Every ended member of the cluster is PENDING again under a new id: on the disks it kept
        (pinned there: ``request["pin"]``), or fresh ones if it kept none; its launch count unchanged
        (for the orchestrator nothing died). Members not ended are left as they are, so a repeat
        changes nothing. Returns the cluster's tasks."""
        with self.sessions.begin() as session:
            for task in session.scalars(select(Task).where(Task.cluster_id == cluster_id).with_for_update()):
                if not is_member(task) or task.state not in TERMINAL_STATES:
                    continue
                if task.release_owed:  # its container (and, kept nothing, its disks) still go first
                    raise release_pending(task)
                request = _placed_on_kept_disks(task)
                task.request, task.keep_disks, task.kill_requested = request, False, False
                _pending_again(session, task, new_task_id(task.member_id), "starting: waiting for an offer"
                               + (f" on node {task.hostname}" if "pin" in request else ""), keep_place="pin" in request)
        return self.by_cluster(cluster_id)

    def update_container(self, cluster_id: str, member_id: str, container: dict[str, Any]) -> Task | None:
        """The member's request carries this container from now on (for its relaunches); None if unknown."""
        with self.sessions.begin() as session:
            task = session.scalar(select(Task).where(Task.cluster_id == cluster_id, Task.member_id == member_id)
                                  .with_for_update())
            if task is None:
                return None
            task.request = {**task.request, "container": container}
        return self.get_member(cluster_id, member_id)

    def handed_over(self, member_ids: Collection[str]) -> None:
        """These ended members' kept disks now belong to someone else (a dataset): they keep nothing."""
        with self.sessions.begin() as session:
            session.execute(update(Task).where(Task.member_id.in_(list(member_ids)), Task.state.in_(TERMINAL_STATES))
                            .values(keep_disks=False))


def _placed_on_kept_disks(task: Task) -> dict[str, Any]:
    """The ended task's request for its next launch: pinned to the disks it kept on its node, or (it
    kept none) with no pin, to be placed on fresh ones."""
    request = {k: v for k, v in task.request.items() if k != "pin"}
    if kept(task):
        request["pin"] = {"node": task.hostname, "mount_points": list(task.disk_roots)}
    return request


def _keep_no_more(task: Task) -> None:
    """A kill: the task keeps no disks any more; ended already, it owes their release now."""
    if task.keep_disks:
        task.keep_disks = False
        if task.state in TERMINAL_STATES:
            for name, value in OWED.items():
                setattr(task, name, value)


def release_pending(task: Task) -> ApiError:
    return ApiError(503, "RELEASE_PENDING", f"member {task.member_id}'s ended task {task.task_id} has not released "
                    f"its disks yet ({task.release_error or 'in progress'}); retry", {"task_id": task.task_id})


def _pending_again(session: Session, task: Task, new_task_id: str, message: str, keep_place: bool = False) -> Task:
    """``task`` as a new PENDING task, placed nowhere and holding nothing (Mesos never reuses task ids);
    with ``keep_place`` it still holds its kept disks (it is pinned to them), which stay recorded."""
    task.task_id, task.state, task.message = new_task_id, "PENDING", message
    task.agent_id = task.ip = None
    if not keep_place:
        task.hostname = None
        task.disk_roots, task.disks = [], []
    notify(session, TASKS, task.cluster_id)
    session.flush()
    session.refresh(task)  # updated_at, as the database set it
    return task
