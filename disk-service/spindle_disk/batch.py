"""Per-cluster batches: every member's disks held in ONE transaction, all or nothing; many owners
released in one call.

The rules are those of :mod:`spindle_disk.allocation` (one owner's disks on one node; asking again
for exactly what an owner holds returns the same disks; ``SELECT … FOR UPDATE SKIP LOCKED`` so
parallel requests take different disks; the partial unique index ``uq_allocations_active_disk``
as the last word), applied set-based: a batch costs a fixed handful of SQL statements whatever its
size — lock the owners, read what they hold, claim the free disks of every (node, class) in one
``LATERAL`` query, then write the state changes, allocation rows and audit rows in one statement.

:func:`plan` is the pure part (which request is already satisfied, which needs disks, which
conflicts); the functions below it talk to PostgreSQL.
"""
import random
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from spindle_common.errors import ApiError
from spindle_disk.allocation import CONTENDED_ATTEMPTS, CONTENDED_PAUSE_S
from spindle_disk.states import ALLOCATED, FREE, WIPING, check_transition


@dataclass(frozen=True)
class Ask:
    """One request of a batch: ``count`` disks of ``disk_class`` on ``node`` for ``owner``."""

    owner: str
    node: str
    disk_class: str
    count: int


@dataclass(frozen=True)
class HeldRow:
    """A disk an owner holds now, with the facts the batch answer reports."""

    owner: str
    id: int
    node: str
    disk_class: str
    device_path: str
    mount_point: str
    size_bytes: int


@dataclass
class Plan:
    """``reuse``: request index → the disks that already satisfy it; ``need``: indexes of requests
    that need fresh disks, in request order."""

    reuse: dict[int, list[HeldRow]]
    need: list[int]


def _conflict(code: str, message: str, index: int, ask: Ask, **details) -> ApiError:
    return ApiError(409, code, message, {"request": index, "owner": ask.owner, "node": ask.node,
                                         "disk_class": ask.disk_class, "requested": ask.count, **details})


def check_consistent(asks: Sequence[Ask]) -> None:
    """A batch names each (owner, class) once and each owner on one node (422 otherwise)."""
    node_of: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for i, ask in enumerate(asks):
        if (ask.owner, ask.disk_class) in seen:
            raise ValueError(f"requests[{i}]: {ask.owner} asks for {ask.disk_class} disks twice")
        seen.add((ask.owner, ask.disk_class))
        if node_of.setdefault(ask.owner, ask.node) != ask.node:
            raise ValueError(f"requests[{i}]: {ask.owner} asks for disks on {node_of[ask.owner]} and on {ask.node}; "
                             "one owner's disks are on one node")


def plan(asks: Sequence[Ask], held: Sequence[HeldRow]) -> Plan:
    """Decide, request by request, as the single allocation does: an owner holding disks on another
    node is a 409 OWNER_ON_OTHER_NODE; holding another count of the class on the node a 409
    OWNER_HOLDS_OTHER_COUNT; holding exactly the count: those disks; holding none: fresh ones."""
    by_owner: dict[str, list[HeldRow]] = defaultdict(list)
    for row in held:
        by_owner[row.owner].append(row)
    result = Plan(reuse={}, need=[])
    for i, ask in enumerate(asks):
        rows = by_owner.get(ask.owner, [])
        elsewhere = sorted({r.node for r in rows if r.node != ask.node})
        if elsewhere:
            raise _conflict("OWNER_ON_OTHER_NODE", f"{ask.owner} already holds disks on another node", i, ask,
                            nodes=elsewhere)
        same = sorted((r for r in rows if r.disk_class == ask.disk_class), key=lambda r: r.id)
        if not same:
            result.need.append(i)
        elif len(same) == ask.count:
            result.reuse[i] = same
        else:
            raise _conflict("OWNER_HOLDS_OTHER_COUNT",
                            f"{ask.owner} already holds {len(same)} {ask.disk_class} disks on {ask.node}", i, ask,
                            held=[r.id for r in same])
    return result


def first_unsatisfiable(asks: Sequence[Ask], need: Sequence[int], free: dict[tuple[str, str], int]) -> int | None:
    """The first request (index) whose (node, class) runs out of ``free`` disks when the requests
    that need disks take them in order; None when every one fits."""
    left = dict(free)
    for i in need:
        key = (asks[i].node, asks[i].disk_class)
        left[key] = left.get(key, 0) - asks[i].count
        if left[key] < 0:
            return i
    return None


class _Contended(Exception):
    """Enough disks are free, but requests still in flight lock some of them: try again."""


_LOCK_OWNERS = text(
    "SELECT pg_advisory_xact_lock(h) FROM ("
    " SELECT DISTINCT hashtext(o) AS h FROM unnest(CAST(:owners AS text[])) AS o ORDER BY h) AS ordered")

_NODES = text("SELECT name, id FROM disk.nodes WHERE name = ANY(CAST(:names AS text[]))")

_HELD = text(
    "SELECT a.owner, d.id, n.name, d.disk_class, d.device_path, d.mount_point, d.size_bytes "
    "FROM disk.allocations a JOIN disk.disks d ON d.id = a.disk_id JOIN disk.nodes n ON n.id = d.node_id "
    "WHERE a.released_at IS NULL AND a.owner = ANY(CAST(:owners AS text[])) ORDER BY d.id")

# Every (node, class) of the batch at once; each takes its lowest free disks that nobody has locked.
_CLAIM = text(
    "SELECT w.node_id, w.disk_class, c.id, c.device_path, c.mount_point, c.size_bytes "
    "FROM unnest(CAST(:node_ids AS int[]), CAST(:classes AS text[]), CAST(:counts AS int[])) "
    "AS w(node_id, disk_class, n) "
    "CROSS JOIN LATERAL ("
    " SELECT d.id, d.device_path, d.mount_point, d.size_bytes FROM disk.disks d"
    " WHERE d.node_id = w.node_id AND d.disk_class = w.disk_class AND d.state = 'free'"
    " ORDER BY d.id LIMIT w.n FOR UPDATE SKIP LOCKED) AS c "
    "ORDER BY c.id")

# Free as last committed (also counting disks that requests in flight have locked).
_FREE = text(
    "SELECT w.node_id, w.disk_class, count(d.id) "
    "FROM unnest(CAST(:node_ids AS int[]), CAST(:classes AS text[])) AS w(node_id, disk_class) "
    "LEFT JOIN disk.disks d ON d.node_id = w.node_id AND d.disk_class = w.disk_class AND d.state = 'free' "
    "GROUP BY w.node_id, w.disk_class")

# State change, allocation rows and audit rows of every claimed disk, in one statement.
_TAKE = text(
    "WITH pick AS (SELECT * FROM unnest(CAST(:disk_ids AS int[]), CAST(:owners AS text[])) AS p(disk_id, owner)), "
    "moved AS (UPDATE disk.disks d SET state = 'allocated', state_reason = NULL, updated_at = now() "
    "          FROM pick WHERE d.id = pick.disk_id AND d.state = 'free' RETURNING d.id), "
    "held AS (INSERT INTO disk.allocations (disk_id, owner, allocated_by) "
    "         SELECT disk_id, owner, :actor FROM pick), "
    "audit AS (INSERT INTO disk.disk_transitions (disk_id, from_state, to_state, actor, owner) "
    "          SELECT disk_id, 'free', 'allocated', :actor, owner FROM pick) "
    "SELECT count(*) FROM moved")


def allocate_batch(session: Session, asks: Sequence[Ask], actor: str) -> tuple[dict[str, list[HeldRow]], bool]:
    """Give every request its disks, all in one transaction or none at all.

    Returns (owner → its disks for these requests, in request order; whether this call allocated
    any). Repeating a batch whose owners already hold exactly what it asks returns the same disks
    and allocates nothing.
    """
    check_transition(0, FREE, ALLOCATED)  # the one edge a batch takes, checked like every move
    for attempt in range(CONTENDED_ATTEMPTS):
        try:
            return _allocate_once(session, asks, actor)
        except _Contended:
            session.rollback()
            time.sleep(CONTENDED_PAUSE_S * (1 + random.random()) * min(attempt + 1, 5))
    raise ApiError(503, "ALLOCATION_CONTENDED", "too many concurrent requests for these disks, retry",
                   {"requests": len(asks)})


def _allocate_once(session: Session, asks: Sequence[Ask], actor: str) -> tuple[dict[str, list[HeldRow]], bool]:
    owners = sorted({a.owner for a in asks})
    names = sorted({a.node for a in asks})
    node_ids: dict[str, int] = dict(session.execute(_NODES, {"names": names}).all())
    for i, ask in enumerate(asks):
        if ask.node not in node_ids:
            raise ApiError(404, "NODE_NOT_FOUND", f"no node named {ask.node!r}", {"node": ask.node, "request": i})
    # One owner's batches (a retry racing the original) take turns, as single allocations do.
    session.execute(_LOCK_OWNERS, {"owners": owners})
    held = [HeldRow(*row) for row in session.execute(_HELD, {"owners": owners})]
    decided = plan(asks, held)
    chosen: dict[int, list[HeldRow]] = dict(decided.reuse)
    if decided.need:
        demand: dict[tuple[str, str], int] = defaultdict(int)
        for i in decided.need:
            demand[(asks[i].node, asks[i].disk_class)] += asks[i].count
        keys = list(demand)
        claimed: dict[tuple[str, str], list[list[Any]]] = defaultdict(list)  # [id, device, mount, size]
        node_names = {v: k for k, v in node_ids.items()}
        for node_id, disk_class, *facts in session.execute(_CLAIM, {
                "node_ids": [node_ids[n] for n, _ in keys], "classes": [c for _, c in keys],
                "counts": [demand[k] for k in keys]}):
            claimed[(node_names[node_id], disk_class)].append(facts)
        short = [k for k in keys if len(claimed[k]) < demand[k]]
        if short:
            free = {(node_names[node_id], disk_class): n for node_id, disk_class, n in session.execute(_FREE, {
                "node_ids": [node_ids[n] for n, _ in short], "classes": [c for _, c in short]})}
            culprit = first_unsatisfiable(asks, [i for i in decided.need if (asks[i].node, asks[i].disk_class) in free],
                                          free)
            if culprit is None:
                raise _Contended()
            ask = asks[culprit]
            key = (ask.node, ask.disk_class)
            raise _conflict("INSUFFICIENT_DISKS",
                            f"request {culprit} ({ask.owner}): {ask.node} has {free[key]} free {ask.disk_class} disks, "
                            f"the batch asks {demand[key]} there", culprit, ask,
                            free=free[key], requested_on_node=demand[key])
        for i in decided.need:
            ask = asks[i]
            group = claimed[(ask.node, ask.disk_class)]
            taken, claimed[(ask.node, ask.disk_class)] = group[:ask.count], group[ask.count:]
            chosen[i] = [HeldRow(ask.owner, disk_id, ask.node, ask.disk_class, device, mount, size)
                         for disk_id, device, mount, size in taken]
        picked = [row for i in decided.need for row in chosen[i]]
        try:
            moved = session.execute(_TAKE, {"disk_ids": [r.id for r in picked], "owners": [r.owner for r in picked],
                                            "actor": actor}).scalar_one()
            if moved != len(picked):  # rows we hold locked as free cannot change; never seen
                raise _Contended()
            session.commit()
        except IntegrityError as exc:  # only if something bypassed the row locks
            session.rollback()
            raise ApiError(409, "DISK_ALREADY_ALLOCATED", "a disk was allocated concurrently",
                           {"disk_ids": [r.id for r in picked]}) from exc
    else:
        session.rollback()  # nothing to write: let go of the owners' locks
    result: dict[str, list[HeldRow]] = {}
    for i, ask in enumerate(asks):
        result.setdefault(ask.owner, []).extend(chosen[i])
    return result, bool(decided.need)


_RELEASABLE = text(
    "SELECT a.id, a.owner, d.id, d.state FROM disk.allocations a JOIN disk.disks d ON d.id = a.disk_id "
    "WHERE a.released_at IS NULL AND a.owner = ANY(CAST(:owners AS text[])) ORDER BY d.id FOR UPDATE OF a, d")

_RELEASE = text(
    "WITH ended AS (UPDATE disk.allocations SET released_at = now(), released_by = :actor "
    "               WHERE id = ANY(CAST(:allocation_ids AS int[])) RETURNING id), "
    "wipe AS (SELECT * FROM unnest(CAST(:disk_ids AS int[]), CAST(:owners AS text[])) AS w(disk_id, owner)), "
    "moved AS (UPDATE disk.disks d SET state = 'wiping', state_reason = 'released', updated_at = now() "
    "          FROM wipe WHERE d.id = wipe.disk_id), "
    "audit AS (INSERT INTO disk.disk_transitions (disk_id, from_state, to_state, actor, owner, reason) "
    "          SELECT disk_id, 'allocated', 'wiping', :actor, owner, 'released' FROM wipe) "
    "SELECT count(*) FROM ended")


def release_owners(session: Session, owners: Sequence[str], actor: str) -> list[int]:
    """End every active allocation of ``owners`` in one transaction; their disks go to ``wiping``.

    Owners holding nothing are fine (a repeated release changes nothing). Returns the ids of disks
    that now need wiping (a disk marked failed while held stays failed, as with one owner).
    """
    check_transition(0, ALLOCATED, WIPING)
    rows = session.execute(_RELEASABLE, {"owners": sorted(set(owners))}).all()
    if not rows:
        session.rollback()
        return []
    wipe = [(disk_id, owner) for _, owner, disk_id, state in rows if state == ALLOCATED]
    session.execute(_RELEASE, {"allocation_ids": [r[0] for r in rows], "disk_ids": [d for d, _ in wipe],
                               "owners": [o for _, o in wipe], "actor": actor})
    session.commit()
    return [d for d, _ in wipe]
