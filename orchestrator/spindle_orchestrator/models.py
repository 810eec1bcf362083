"""Tables owned by the orchestrator, all in the PostgreSQL schema ``orchestrator``."""
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Text, UniqueConstraint, func, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("orchestrator")


class Cluster(Base):
    __tablename__ = "clusters"
    __table_args__ = (UniqueConstraint("owner_id", "idempotency_key", name="uq_clusters_owner_id_idempotency_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # The owner's username: a name to show and to address the cluster by, not who owns it.
    owner: Mapped[str] = mapped_column(String(64), index=True)
    # Who owns it: the user's stable, never reused id (spindle_api.upstream.actor_of, "u<users.id>"),
    # so a user re-created under the same name owns none of it. NULL only for a cluster from before
    # ids whose user was already gone (migration 0005): nobody's but the admins'.
    owner_id: Mapped[str | None] = mapped_column(String(64), index=True)
    product: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(16), index=True)
    reason_code: Mapped[str | None] = mapped_column(String(64))
    reason: Mapped[str | None] = mapped_column(String(2000))
    idempotency_key: Mapped[str | None] = mapped_column(String(128))
    # When the current step must be done by; past it the launch fails with a reason and cleans up.
    deadline: Mapped[datetime | None]
    # Set once a FAILED cluster's resources have been given back.
    cleaned_up: Mapped[bool] = mapped_column(default=False)
    delete_requested: Mapped[bool] = mapped_column(default=False)
    # The owner wants it stopped (containers gone, disks and IPs kept); a start clears it.
    stop_requested: Mapped[bool] = mapped_column(default=False)
    # The delete keeps the members' disks as a dataset of the owner (``dataset_id``).
    keep_disks: Mapped[bool] = mapped_column(default=False)
    # The dataset its members' disks belong to: attached at launch (its disks taken over by the members
    # of the same role and index), or made by a delete with ``keep_disks`` (KEEPING until they are in).
    dataset_id: Mapped[str | None] = mapped_column(String(32))
    # The data-plane secret (hex) given to this cluster's members and jobs' drivers only (env
    # SPINDLE_CLUSTER_SECRET): never in a view, an event or a log (docs/ARCHITECTURE.md).
    secret: Mapped[str | None] = mapped_column(String(128))
    # What the cluster counts against its owner's quota (quotas.Amounts as JSON), fixed at creation.
    demand: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # Members a resize drained and removed ({"member_id", "role", "ip"}), until their IP is a member's
    # again: templates see them in ``retired`` (HDFS keeps them in the NameNode's exclude file, so a
    # reload never takes a removed DataNode the NameNode still counts as live back into service).
    retired: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    # What its owner should know that the state does not say ({"code", "message", "at"}; the view's
    # ``notices``), e.g. BINDING_GONE: a cluster it binds was deleted with force.
    notices: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())

    members: Mapped[list["Member"]] = relationship(order_by="Member.member_id", lazy="selectin")


def identity(cluster: Cluster) -> dict[str, str]:
    """What the product's templates know of the cluster itself (``cluster`` in them)."""
    return {"id": cluster.id, "owner": cluster.owner, "product": cluster.product, "version": cluster.version}


class Member(Base):
    __tablename__ = "members"

    member_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    cluster_id: Mapped[str] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(64))
    index: Mapped[int]
    state: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(String(2000), default="")
    node: Mapped[str | None] = mapped_column(String(255))
    ip: Mapped[str | None] = mapped_column(String(64))
    dns_name: Mapped[str | None] = mapped_column(String(255))
    disks: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    ports: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # How often the scheduler launched this member again after it died (products that ask for it).
    replacements: Mapped[int] = mapped_column(default=0)
    # The member's launch request as sent to the scheduler (resources + rendered container).
    spec: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # A resize removing it, of a role that drains: "draining" since ``drain_since``, then "drained".
    drain_state: Mapped[str | None] = mapped_column(String(16))
    drain_since: Mapped[datetime | None]


class Event(Base):
    """The per-cluster, per-member, per-step timeline."""

    __tablename__ = "events"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    cluster_id: Mapped[str] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), index=True)
    member_id: Mapped[str | None] = mapped_column(String(128))
    step: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(String(2000), default="")
    at: Mapped[datetime] = mapped_column(server_default=func.now())


class Job(Base):
    """A driver program run against a running cluster: its files, state, logs and exit code."""

    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    cluster_id: Mapped[str] = mapped_column(ForeignKey("clusters.id", ondelete="CASCADE"), index=True)
    owner: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16), index=True)  # PENDING | RUNNING | SUCCEEDED | FAILED | KILLED
    main: Mapped[str] = mapped_column(String(255))  # the file the driver runs
    args: Mapped[list[str]] = mapped_column(JSON, default=list)
    files: Mapped[list[str]] = mapped_column(JSON, default=list)  # names under the job's /job folder
    message: Mapped[str] = mapped_column(String(2000), default="")
    exit_code: Mapped[int | None]
    stdout: Mapped[str] = mapped_column(Text, default="")
    stderr: Mapped[str] = mapped_column(Text, default="")
    container: Mapped[str | None] = mapped_column(String(128))
    ip: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]


class Quota(Base):
    """A user's limits (by the owner the api-server forwards); NULL: the platform's default. A row
    with every limit NULL is still the lock the user's launches serialise on (quotas.py)."""

    __tablename__ = "quotas"

    owner: Mapped[str] = mapped_column(String(64), primary_key=True)
    clusters: Mapped[int | None]
    cpus: Mapped[float | None]
    mem_mb: Mapped[int | None]
    disks: Mapped[dict[str, int] | None] = mapped_column(JSON)  # per class; a class missing: its default
    floating_ips: Mapped[int | None]
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())


class Dataset(Base):
    """Whole disks kept with their data when a cluster was deleted with ``keep_disks``, owned by its
    owner (counted against their disk quota) until a later launch of the product attaches them or
    they are reclaimed (wiped). ``members``: per member of the cluster it came from, its role,
    index, node and disks (``id``, ``mount_point``, ``disk_class``, ``size_bytes``); disk-service
    holds them for ``dataset-<id>-<role>-<index>`` (``datasets.part_owner``)."""

    __tablename__ = "datasets"
    __table_args__ = (Index("uq_datasets_owner_name_live", "owner_id", "name", unique=True,
                            postgresql_where=text("state IN ('KEEPING', 'KEPT', 'ATTACHED')")),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(String(64))  # the owner's name, to show
    owner_id: Mapped[str] = mapped_column(String(64), index=True)  # who owns it (as clusters.owner_id)
    product: Mapped[str] = mapped_column(String(64))
    version: Mapped[str] = mapped_column(String(32))
    source_cluster: Mapped[str] = mapped_column(String(32))
    # KEEPING (a deleted cluster's disks are being handed to it) | KEPT (holds its disks) | ATTACHED (a
    # cluster's members take them over) | RELEASED (wiped with that cluster) | RECLAIMED (wiped on its
    # owner's or an admin's request)
    state: Mapped[str] = mapped_column(String(16), index=True)
    attached_to: Mapped[str | None] = mapped_column(String(32))
    members: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now(), onupdate=func.now())
