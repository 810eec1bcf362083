"""Allocations (scheduler, orchestrator, admin): give owners whole disks exclusively; release them.

Every error answer is the envelope ``{"error": {"code", "message", "details"}}``.
"""
from typing import Any

from fastapi import APIRouter, Response, status

from spindle_common import contracts
from spindle_common.errors import ApiError, ErrorEnvelope, error_responses
from spindle_disk import allocation, batch, inventory, schemas, wipe
from spindle_disk.api.deps import ServiceOrAdmin, SessionDep, SettingsDep, WiperDep
from spindle_disk.models import Disk

router = APIRouter(prefix="/allocations", tags=["allocations"])


def _disks(session, disk_ids: list[int]) -> list[schemas.DiskOut]:
    return inventory.views(session, inventory.disk_query().where(Disk.id.in_(disk_ids)).order_by(Disk.id))


def _allocated(disk: Any) -> schemas.AllocatedDisk:
    """A held disk (a batch's row, or a disk's view) as a launch needs it."""
    return schemas.AllocatedDisk(id=disk.id, node=disk.node, device_path=disk.device_path,
                                 mount_point=disk.mount_point, disk_class=contracts.DiskClass(disk.disk_class),
                                 size_bytes=disk.size_bytes)


@router.post("", response_model=schemas.AllocationOut, status_code=status.HTTP_201_CREATED)
def allocate_disks(body: schemas.AllocationRequest, session: SessionDep, caller: ServiceOrAdmin,
                   response: Response):
    """Allocate ``count`` free disks of a class on a node to ``owner``, all or none (201).

    The same request again returns the owner's disks with 200.
    """
    disk_ids, created = allocation.allocate(session, body.node, body.disk_class, body.count, body.owner,
                                            caller.actor)
    if not created:
        response.status_code = status.HTTP_200_OK
    return schemas.AllocationOut(owner=body.owner, node=body.node, disks=_disks(session, disk_ids))


@router.get("", response_model=schemas.AllocationOut)
def get_allocation(owner: str, session: SessionDep, _: ServiceOrAdmin):
    """What ``owner`` holds (owners are free-form, e.g. ``cluster/member``, hence a query parameter)."""
    node, disk_ids = allocation.held_by(session, owner)
    if node is None:
        raise ApiError(404, "NOT_ALLOCATED", f"{owner} holds no disks", {"owner": owner})
    return schemas.AllocationOut(owner=owner, node=node, disks=_disks(session, disk_ids))


# Error answers carry the envelope; each description names the codes that status can carry.
BATCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": schemas.BatchAllocationOut,
          "description": "every owner already held exactly what it asks: the same disks, nothing new"},
    201: {"description": "disks allocated (owners that already held theirs keep them)"},
    404: {"model": ErrorEnvelope,
          "description": "NODE_NOT_FOUND: a request names an unknown node (details: node, request index)"},
    409: {"model": ErrorEnvelope,
          "description": "INSUFFICIENT_DISKS: a node has too few free disks of a class for the batch; "
                         "OWNER_ON_OTHER_NODE: an owner already holds disks on another node; "
                         "OWNER_HOLDS_OTHER_COUNT: an owner holds another count of that class there; "
                         "DISK_ALREADY_ALLOCATED: the database refused a second owner for a disk. details name "
                         "the request (request index, owner, node, disk_class, requested); nothing is allocated"},
    503: {"model": ErrorEnvelope,
          "description": "ALLOCATION_CONTENDED: concurrent requests kept locking the disks; retry"},
    **error_responses(401, 403, 422, 500),
}
RELEASE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the disks released, now being wiped (a disk marked failed stays failed, unlisted)"},
    404: {"model": ErrorEnvelope, "description": "DISK_NOT_FOUND: a disk of disk_ids does not exist"},
    409: {"model": ErrorEnvelope,
          "description": "NOT_ALLOCATED: with owner, it holds no disks; with disk_ids, some are not allocated "
                         "(nothing is released). With owners, an owner holding nothing is no error"},
    **error_responses(401, 403, 422, 500),
}


@router.post("/batch", response_model=schemas.BatchAllocationOut, status_code=status.HTTP_201_CREATED,
             responses=BATCH_RESPONSES)
def allocate_batch(body: schemas.BatchAllocationRequest, session: SessionDep, caller: ServiceOrAdmin,
                   response: Response) -> schemas.BatchAllocationOut:
    """Allocate every request's disks in ONE transaction: all of them, or none (per-cluster batching).

    Each request asks ``count`` free disks of ``disk_class`` on ``node`` for ``owner``; an owner
    appears once per class and always on one node. The rules are those of ``POST /allocations``;
    an owner that already holds exactly what it asks keeps those disks, so a retry after a crash
    returns the same disks (200 when nothing new was allocated).
    """
    asks = [batch.Ask(r.owner, r.node, r.disk_class.value, r.count) for r in body.requests]
    held, created = batch.allocate_batch(session, asks, caller.actor)
    if not created:
        response.status_code = status.HTTP_200_OK
    return schemas.BatchAllocationOut(allocations={owner: [_allocated(d) for d in disks]
                                                   for owner, disks in held.items()})


@router.post("/transfer", response_model=schemas.BatchAllocationOut, responses={
    200: {"description": "to_owner → every disk it holds now"},
    409: {"model": ErrorEnvelope,
          "description": "OWNER_ON_OTHER_NODE: a to_owner would hold disks on two nodes; nothing moved"},
    **error_responses(401, 403, 422, 500)})
def transfer_disks(body: schemas.TransferRequest, session: SessionDep,
                   caller: ServiceOrAdmin) -> schemas.BatchAllocationOut:
    """Hand every disk of each ``from_owner`` to its ``to_owner`` with its data (no wipe): a stopped
    or deleted member's disks kept as a dataset, a dataset's taken over by a member of a new cluster.
    A move whose from_owner holds nothing moves nothing, so a repeat is harmless."""
    held = allocation.transfer(session, [(m.from_owner, m.to_owner) for m in body.moves], caller.actor)
    rows = {d.id: d for d in _disks(session, [i for ids in held.values() for i in ids])}
    return schemas.BatchAllocationOut(allocations={owner: [_allocated(rows[i]) for i in ids]
                                                   for owner, ids in held.items()})


@router.post("/release", response_model=list[schemas.DiskOut], responses=RELEASE_RESPONSES)
def release_disks(body: schemas.ReleaseRequest, session: SessionDep, caller: ServiceOrAdmin, wiper: WiperDep,
                  settings: SettingsDep):
    """Release an owner's disks, the given disks, or every disk of many ``owners`` in one call (one
    transaction): they are wiped in the background (by their node, when it is not this machine),
    then free."""
    if body.owners is not None:
        to_wipe = batch.release_owners(session, body.owners, caller.actor)
    else:
        to_wipe = allocation.release(session, caller.actor, owner=body.owner, disk_ids=body.disk_ids)
    released = _disks(session, to_wipe)
    wiper.submit(wipe.local_only(session, to_wipe, settings))
    return released
