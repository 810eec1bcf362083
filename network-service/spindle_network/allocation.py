"""Floating IPs for owners (cluster members): exclusive, idempotent per owner, concurrent-safe.

Free addresses are claimed with ``FOR UPDATE SKIP LOCKED`` so parallel requests take different
rows; the primary key (one row per address) and the unique (pool, owner) index are what finally
guarantee no IP is handed out twice and an owner keeps the one it has.
"""
import time
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from spindle_common.errors import ApiError
from spindle_network.models import FloatingIp, Pool

CONTENDED_ATTEMPTS = 50


def pool_or_404(session: Session, name: str) -> Pool:
    pool = session.scalar(select(Pool).where(Pool.name == name))
    if pool is None:
        raise ApiError(404, "POOL_NOT_FOUND", f"IP pool {name!r} does not exist", {"pool": name})
    return pool


def held_by(session: Session, pool_id: int, owner: str) -> FloatingIp | None:
    return session.scalar(select(FloatingIp).where(FloatingIp.pool_id == pool_id, FloatingIp.owner == owner))


def allocate(session: Session, pool_name: str, owner: str) -> tuple[FloatingIp, bool]:
    """The owner's IP in the pool (the one it holds, or a newly claimed one). Returns (ip, created)."""
    for _ in range(CONTENDED_ATTEMPTS):
        pool = pool_or_404(session, pool_name)
        held = held_by(session, pool.id, owner)
        if held:
            return held, False
        free = session.scalar(select(FloatingIp).where(FloatingIp.pool_id == pool.id, FloatingIp.owner.is_(None))
                              .order_by(FloatingIp.address).limit(1).with_for_update(skip_locked=True))
        if free is None:
            unlocked_free = session.scalar(select(func.count()).select_from(FloatingIp).where(
                FloatingIp.pool_id == pool.id, FloatingIp.owner.is_(None)))
            session.rollback()
            if not unlocked_free:
                raise ApiError(409, "POOL_EXHAUSTED", f"IP pool {pool_name!r} has no free floating IP",
                               {"pool": pool_name, "free": 0})
            time.sleep(0.01)  # free rows exist but are locked by requests in flight: look again
            continue
        free.owner, free.allocated_at = owner, datetime.utcnow()
        try:
            session.commit()
        except IntegrityError:  # the same owner won a parallel request: it keeps that one
            session.rollback()
            continue
        return free, True
    raise ApiError(503, "ALLOCATION_CONTENDED", "too many concurrent requests for this pool, retry",
                   {"pool": pool_name})


def owned(session: Session, owner: str, lock: bool = False) -> list[FloatingIp]:
    """The owner's IPs (``lock``: row-locked, so concurrent releases of one owner take turns)."""
    query = select(FloatingIp).where(FloatingIp.owner == owner)
    rows = list(session.scalars(query.with_for_update() if lock else query))
    if not rows:
        raise ApiError(404, "NOT_ALLOCATED", f"{owner} holds no floating IP", {"owner": owner})
    return rows


def ip_or_404(session: Session, address: str) -> FloatingIp:
    row = session.get(FloatingIp, address)
    if row is None:
        raise ApiError(404, "IP_NOT_FOUND", f"{address} is not a floating IP of any pool", {"address": address})
    return row
