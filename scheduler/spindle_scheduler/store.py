"""The scheduler's state in PostgreSQL: its FrameworkID and every member task."""
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from spindle_scheduler.models import FrameworkRecord, Task

FRAMEWORK_NAME = "spindle"
# Mesos states after which a task holds nothing any more.
TERMINAL_STATES = frozenset({"TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR",
                             "TASK_DROPPED", "TASK_GONE", "TASK_GONE_BY_OPERATOR", "TASK_UNKNOWN"})


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

    def get(self, task_id: str) -> Task | None:
        with self.sessions() as session:
            return session.get(Task, task_id)

    def by_cluster(self, cluster_id: str) -> list[Task]:
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.cluster_id == cluster_id).order_by(Task.member_id)))

    def in_states(self, *states: str) -> list[Task]:
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.state.in_(states)).order_by(Task.task_id)))

    def live(self) -> list[Task]:
        """Tasks that may hold resources: launched and not yet terminal."""
        with self.sessions() as session:
            return list(session.scalars(select(Task).where(Task.state.not_in(TERMINAL_STATES | {"PENDING"}))))

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
        with self.sessions.begin() as session:
            session.execute(update(Task).where(Task.task_id == task_id).values(**fields))

    def replace(self, task_id: str, new_task_id: str, request: dict[str, Any], message: str) -> None:
        """The member of ``task_id`` becomes a new PENDING task (Mesos never reuses task ids)."""
        with self.sessions.begin() as session:
            session.execute(update(Task).where(Task.task_id == task_id).values(
                task_id=new_task_id, state="PENDING", message=message, request=request, hostname=None,
                agent_id=None, disk_roots=[], ip=None))

    def request_kill(self, cluster_id: str) -> list[Task]:
        with self.sessions.begin() as session:
            session.execute(update(Task).where(Task.cluster_id == cluster_id).values(kill_requested=True))
        return self.by_cluster(cluster_id)
