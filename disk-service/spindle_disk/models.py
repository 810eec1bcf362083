"""Tables owned by disk-service, all in the PostgreSQL schema ``disk``.

A node holds disks; a disk moves through the states in :mod:`spindle_disk.states`; an allocation
row ties a disk to one owner (a cluster member) and a partial unique index makes that exclusive;
every state change leaves a row in ``disk_transitions``.
"""
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, String, func, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from spindle_common.contracts import DISK_CLASSES, DISK_STATES
from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("disk")


class Node(Base):
    """A machine whose whole local disks Spindle schedules."""

    __tablename__ = "nodes"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(253), unique=True)
    address: Mapped[str] = mapped_column(String(255))
    # Disks prepared for Spindle are mounted below this directory.
    disk_root: Mapped[str] = mapped_column(String(4096))
    cpus: Mapped[float | None]
    mem_mb: Mapped[int | None]
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # The node agent's last heartbeat (``POST /nodes/{name}/heartbeat``); NULL: never heard from.
    last_seen_at: Mapped[datetime | None]
    # The failure domain an admin put the node in (``PATCH /nodes/{name}``); NULL: none.
    rack: Mapped[str | None] = mapped_column(String(63))

    @property
    def failure_domain(self) -> str:
        """What placement spreads replicas over: the node's rack, or the node itself when it has none."""
        return self.rack or self.name


class Disk(Base):
    """One whole physical (or dev loop) disk with its own filesystem and mount point."""

    __tablename__ = "disks"
    __table_args__ = (
        CheckConstraint(f"disk_class IN {DISK_CLASSES}", name="disk_class"),
        CheckConstraint(f"state IN {DISK_STATES}", name="state"),
        # Discovery recognises a disk again by its mount point on its node.
        Index("uq_disks_node_mount_point", "node_id", "mount_point", unique=True),
        Index("ix_disks_allocatable", "node_id", "disk_class", "state"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    node_id: Mapped[int] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    device_path: Mapped[str] = mapped_column(String(4096))
    serial: Mapped[str | None] = mapped_column(String(255))
    model: Mapped[str | None] = mapped_column(String(255))
    transport: Mapped[str | None] = mapped_column(String(32))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    rotational: Mapped[bool]
    mount_point: Mapped[str] = mapped_column(String(4096))
    fs_type: Mapped[str | None] = mapped_column(String(32))
    fs_label: Mapped[str | None] = mapped_column(String(64))
    disk_class: Mapped[str] = mapped_column(String(8))
    labels: Mapped[dict[str, Any]] = mapped_column(JSONB, server_default=text("'{}'::jsonb"))
    state: Mapped[str] = mapped_column(String(16), server_default="free")
    state_reason: Mapped[str | None] = mapped_column(String(1024))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())


class Allocation(Base):
    """A disk given to one owner. Active while ``released_at`` is NULL; kept afterwards as history."""

    __tablename__ = "allocations"
    __table_args__ = (
        # THE exclusivity guarantee: at most one active allocation per disk, enforced by PostgreSQL.
        Index("uq_allocations_active_disk", "disk_id", unique=True,
              postgresql_where=text("released_at IS NULL")),
        Index("ix_allocations_active_owner", "owner", postgresql_where=text("released_at IS NULL")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    disk_id: Mapped[int] = mapped_column(ForeignKey("disks.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(255))
    allocated_by: Mapped[str] = mapped_column(String(255))
    allocated_at: Mapped[datetime] = mapped_column(server_default=func.now())
    released_by: Mapped[str | None] = mapped_column(String(255))
    released_at: Mapped[datetime | None]


class DiskTransition(Base):
    """Audit log: one row per disk state change (who, when, from, to, for which owner, why)."""

    __tablename__ = "disk_transitions"

    id: Mapped[int] = mapped_column(primary_key=True)
    disk_id: Mapped[int] = mapped_column(ForeignKey("disks.id", ondelete="CASCADE"), index=True)
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(255))
    owner: Mapped[str | None] = mapped_column(String(255))
    reason: Mapped[str | None] = mapped_column(String(1024))
    at: Mapped[datetime] = mapped_column(server_default=func.now())
