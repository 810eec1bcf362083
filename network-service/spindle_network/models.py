"""Tables owned by network-service, all in the PostgreSQL schema ``network``.

Exclusivity lives in the database: pools cannot overlap (GiST exclusion on the CIDR), every
floating address is one row (primary key), and an owner holds at most one address per pool
(unique index), so no code path can hand an IP out twice.
"""
from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import CIDR, INET, ExcludeConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("network")


class Pool(Base):
    __tablename__ = "pools"
    __table_args__ = (ExcludeConstraint(("cidr", "&&"), using="gist", name="ex_pools_cidr_overlap",
                                        ops={"cidr": "inet_ops"}),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    cidr: Mapped[str] = mapped_column(CIDR)
    gateway: Mapped[str] = mapped_column(INET)
    # Floating IPs come from here; Docker's own automatic addresses from ``auto_cidr`` (disjoint).
    floating_cidr: Mapped[str] = mapped_column(CIDR)
    auto_cidr: Mapped[str] = mapped_column(CIDR)
    driver: Mapped[str] = mapped_column(String(16))  # bridge | macvlan
    parent: Mapped[str | None] = mapped_column(String(64))  # macvlan parent interface
    docker_network: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class FloatingIp(Base):
    __tablename__ = "floating_ips"
    __table_args__ = (UniqueConstraint("pool_id", "owner", name="uq_floating_ips_pool_owner"),)

    address: Mapped[str] = mapped_column(INET, primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"), index=True)
    owner: Mapped[str | None] = mapped_column(String(255))
    container: Mapped[str | None] = mapped_column(String(128))  # attached to this container, if any
    dns_service: Mapped[str | None] = mapped_column(String(64))
    dns_name: Mapped[str | None] = mapped_column(String(64))
    allocated_at: Mapped[datetime | None]
