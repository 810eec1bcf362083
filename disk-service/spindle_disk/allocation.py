"""Exclusive, all-or-nothing allocation of whole disks to owners (cluster members), and release.

Concurrency: free disks are claimed with ``SELECT … FOR UPDATE SKIP LOCKED`` so parallel requests
take different disks instead of queueing on the same rows (and never deadlock); one owner's
requests are serialised by a transaction-scoped advisory lock so repeats stay idempotent. The
partial unique index ``uq_allocations_active_disk`` is the last word: a disk with an active
allocation cannot get a second one, whatever this code does.
"""
import random
import time
from collections.abc import Sequence

from sqlalchemy import Row, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from spindle_common.errors import ApiError
from spindle_disk import inventory, transitions
from spindle_disk.models import Allocation, Disk, DiskTransition, Node
from spindle_disk.states import ALLOCATED, FREE, WIPING


def _held(session: Session, owner: str) -> Sequence[Row[Disk, str]]:
    """The disks ``owner`` holds now, with their node's name."""
    return session.execute(
        select(Disk, Node.name).join(Allocation, Allocation.disk_id == Disk.id).join(Node, Node.id == Disk.node_id)
        .where(Allocation.owner == owner, Allocation.released_at.is_(None)).order_by(Disk.id)
    ).all()


def _free_count(session: Session, node_id: int, disk_class: str) -> int:
    return session.scalar(select(func.count()).select_from(Disk).where(
        Disk.node_id == node_id, Disk.disk_class == disk_class, Disk.state == FREE)) or 0


class _Contended(Exception):
    """Enough disks are free, but some are locked by requests still in flight: try again."""


# Attempts, and the pause between them, when in-flight requests hold free disks we need.
CONTENDED_ATTEMPTS = 50
CONTENDED_PAUSE_S = 0.02


def allocate(session: Session, node_name: str, disk_class: str, count: int, owner: str,
             actor: str) -> tuple[list[int], bool]:
    """Give ``owner`` ``count`` free disks of ``disk_class`` on ``node_name``, all or none.

    Asking again for what the owner already holds returns the same disks. Returns (disk ids,
    whether this call allocated them). With SKIP LOCKED two requests can each lock part of the
    last disks; then both let go and retry, so all-or-nothing never strands free disks.
    """
    for attempt in range(CONTENDED_ATTEMPTS):
        try:
            return _allocate_once(session, node_name, disk_class, count, owner, actor)
        except _Contended:
            session.rollback()
            time.sleep(CONTENDED_PAUSE_S * (1 + random.random()) * min(attempt + 1, 5))
    raise ApiError(503, "ALLOCATION_CONTENDED", "too many concurrent requests for these disks, retry",
                   {"node": node_name, "disk_class": disk_class, "requested": count})


def _allocate_once(session: Session, node_name: str, disk_class: str, count: int, owner: str,
                   actor: str) -> tuple[list[int], bool]:
    node = inventory.node_or_404(session, node_name)
    session.execute(select(func.pg_advisory_xact_lock(func.hashtext(owner))))
    held = _held(session, owner)
    same = [disk.id for disk, name in held if name == node_name and disk.disk_class == disk_class]
    elsewhere = sorted({name for _, name in held if name != node_name})
    if elsewhere:
        raise ApiError(409, "OWNER_ON_OTHER_NODE", f"{owner} already holds disks on another node",
                       {"owner": owner, "nodes": elsewhere})
    if same:
        if len(same) != count:
            raise ApiError(409, "OWNER_HOLDS_OTHER_COUNT",
                           f"{owner} already holds {len(same)} {disk_class} disks on {node_name}",
                           {"owner": owner, "held": same, "requested": count})
        session.rollback()
        return same, False

    claimed = list(session.scalars(
        select(Disk).where(Disk.node_id == node.id, Disk.disk_class == disk_class, Disk.state == FREE)
        .order_by(Disk.id).limit(count).with_for_update(skip_locked=True)
    ))
    if len(claimed) < count:
        # Free as last committed, including disks other requests have locked but not yet taken.
        free = _free_count(session, node.id, disk_class)
        if free >= count:
            raise _Contended()
        raise ApiError(409, "INSUFFICIENT_DISKS",
                       f"{node_name} has {free} free {disk_class} disks, {count} asked",
                       {"node": node_name, "disk_class": disk_class, "requested": count, "free": free})
    for disk in claimed:
        transitions.move(session, disk, ALLOCATED, actor, owner=owner)
        session.add(Allocation(disk_id=disk.id, owner=owner, allocated_by=actor))
    try:
        session.commit()
    except IntegrityError as exc:  # only if something bypassed the row locks
        session.rollback()
        raise ApiError(409, "DISK_ALREADY_ALLOCATED", "a disk was allocated concurrently",
                       {"disk_ids": [d.id for d in claimed]}) from exc
    return [d.id for d in claimed], True


def release(session: Session, actor: str, owner: str | None = None,
            disk_ids: list[int] | None = None) -> list[int]:
    """End the active allocations of ``owner`` or of ``disk_ids``; their disks go to ``wiping``.

    All or nothing: releasing a disk that is not allocated is a 409 and releases none. Returns the
    ids of disks that now need wiping (a disk marked failed meanwhile stays failed).
    """
    if (owner is None) == (disk_ids is None):
        raise ApiError(422, "VALIDATION_FAILED", "give exactly one of owner or disk_ids")
    query = (select(Allocation, Disk).join(Disk, Disk.id == Allocation.disk_id)
             .where(Allocation.released_at.is_(None)).order_by(Disk.id).with_for_update())
    if owner is not None:
        rows = session.execute(query.where(Allocation.owner == owner)).all()
        if not rows:
            raise ApiError(409, "NOT_ALLOCATED", f"{owner} holds no disks", {"owner": owner})
    else:
        wanted = sorted(set(disk_ids or []))
        rows = session.execute(query.where(Disk.id.in_(wanted))).all()
        missing = sorted(set(wanted) - {disk.id for _, disk in rows})
        if missing:
            unknown = sorted(set(missing) - set(session.scalars(select(Disk.id).where(Disk.id.in_(missing)))))
            if unknown:
                raise ApiError(404, "DISK_NOT_FOUND", "no such disks", {"disk_ids": unknown})
            raise ApiError(409, "NOT_ALLOCATED", "these disks are not allocated", {"disk_ids": missing})
    to_wipe = []
    for allocation, disk in rows:
        allocation.released_at = func.now()
        allocation.released_by = actor
        if disk.state == ALLOCATED:
            transitions.move(session, disk, WIPING, actor, owner=allocation.owner, reason="released")
            to_wipe.append(disk.id)
    session.commit()
    return to_wipe


def held_by(session: Session, owner: str) -> tuple[str | None, list[int]]:
    """(node name, disk ids) of what ``owner`` holds."""
    held = _held(session, owner)
    return (held[0][1] if held else None), [disk.id for disk, _ in held]


def transfer(session: Session, moves: Sequence[tuple[str, str]], actor: str) -> dict[str, list[int]]:
    """Hand every disk each ``from`` owner holds to its ``to`` owner, as they are (no wipe: the
    disks keep their data), all moves in one transaction: a stopped member's disks to a dataset,
    a dataset's to a member of a new cluster. A move whose ``from`` holds nothing moves nothing (a
    repeat after a crash). An owner holds disks on one node only: a ``to`` that would then hold
    disks on two is a 409 and nothing moves. Returns to → the disk ids it holds now. Each handed
    disk gets an audit row (allocated → allocated, the new owner, "handed over by <from>")."""
    owners = sorted({o for move in moves for o in move})
    for owner in owners:  # every owner's advisory lock, in one order: no deadlock with allocate/transfer
        session.execute(select(func.pg_advisory_xact_lock(func.hashtext(owner))))
    for source, target in moves:
        if source == target:
            raise ApiError(422, "VALIDATION_FAILED", f"a move from {source} to itself")
        rows = session.execute(
            select(Allocation, Disk, Node.name).join(Disk, Disk.id == Allocation.disk_id)
            .join(Node, Node.id == Disk.node_id)
            .where(Allocation.owner == source, Allocation.released_at.is_(None)).order_by(Disk.id).with_for_update()
        ).all()
        if not rows:
            continue
        nodes = {name for _, _, name in rows} | {name for _, name in _held(session, target)}
        if len(nodes) > 1:
            session.rollback()
            raise ApiError(409, "OWNER_ON_OTHER_NODE", f"{target} would hold disks on {len(nodes)} nodes",
                           {"owner": target, "nodes": sorted(nodes)})
        for allocation, _, _ in rows:
            allocation.released_at, allocation.released_by = func.now(), actor
        session.flush()  # the old allocations end before the new ones count (uq_allocations_active_disk)
        for _, disk, _ in rows:
            session.add(Allocation(disk_id=disk.id, owner=target, allocated_by=actor))
            session.add(DiskTransition(disk_id=disk.id, from_state=disk.state, to_state=disk.state, actor=actor,
                                       owner=target, reason=f"handed over by {source}"[:1024]))
        session.flush()
    held = {target: [disk.id for disk, _ in _held(session, target)] for _, target in moves}
    session.commit()
    return held
