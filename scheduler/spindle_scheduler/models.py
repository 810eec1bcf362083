"""Tables owned by the scheduler, all in the PostgreSQL schema ``scheduler``."""
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("scheduler")


class FrameworkRecord(Base):
    """The FrameworkID Mesos gave us; re-used on every (re)subscribe so tasks survive restarts."""

    __tablename__ = "framework"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    framework_id: Mapped[str] = mapped_column(String(128))


class Task(Base):
    """One cluster member's Mesos task: what it asked for, where it went, what it holds, its state."""

    __tablename__ = "tasks"

    task_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    cluster_id: Mapped[str] = mapped_column(String(64), index=True)
    member_id: Mapped[str] = mapped_column(String(128), unique=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON)  # the MemberSpec (+ strategy, preferred_hosts, origin)
    # PENDING (waiting for an offer) → LAUNCHING (resources held, ACCEPT sent) → Mesos TASK_* states.
    state: Mapped[str] = mapped_column(String(32), index=True)
    message: Mapped[str] = mapped_column(String(2000), default="")
    hostname: Mapped[str | None] = mapped_column(String(255))
    agent_id: Mapped[str | None] = mapped_column(String(128))
    disk_roots: Mapped[list[str]] = mapped_column(JSON, default=list)
    # The held disks as the member sees them (/data/N) with what disk-service knows of each (HeldDisk).
    disks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # How many Mesos tasks this member has had: 1, plus one per relaunch the orchestrator asked for.
    launches: Mapped[int] = mapped_column(default=1)
    ip: Mapped[str | None] = mapped_column(String(64))
    kill_requested: Mapped[bool] = mapped_column(default=False)
    # Its end keeps its disks held, data and all (a stopped cluster's member, one whose disks become a
    # dataset, or a ``restart: in_place`` member whose container ended on its node): its release
    # removes the container only. Cleared when it is started again (its new task is pinned to them,
    # request["pin"]) or killed (then it owes the release of its disks).
    keep_disks: Mapped[bool] = mapped_column(default=False)
    # The release an ended task owes (its container removed, its member's disks freed and wiped):
    # set in the same transaction as its terminal state, cleared once disk-service confirmed
    # (``releases.py``), so a scheduler restart or a disk-service outage loses none.
    release_owed: Mapped[bool] = mapped_column(default=False)
    release_attempts: Mapped[int] = mapped_column(default=0)
    release_error: Mapped[str] = mapped_column(String(2000), default="")
    released_at: Mapped[datetime | None]
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
