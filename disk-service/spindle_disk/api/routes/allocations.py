"""Allocations (scheduler, orchestrator, admin): give owners whole disks exclusively; release them."""
from fastapi import APIRouter, Response, status

from spindle_common.errors import ApiError
from spindle_disk import allocation, inventory, schemas
from spindle_disk.api.deps import ServiceOrAdmin, SessionDep, WiperDep
from spindle_disk.models import Disk

router = APIRouter(prefix="/allocations", tags=["allocations"])


def _disks(session, disk_ids: list[int]) -> list[schemas.DiskOut]:
    return inventory.views(session, inventory.disk_query().where(Disk.id.in_(disk_ids)).order_by(Disk.id))


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


@router.post("/release", response_model=list[schemas.DiskOut])
def release_disks(body: schemas.ReleaseRequest, session: SessionDep, caller: ServiceOrAdmin, wiper: WiperDep):
    """Release an owner's disks (or the given disks): they are wiped in the background, then free."""
    to_wipe = allocation.release(session, caller.actor, owner=body.owner, disk_ids=body.disk_ids)
    released = _disks(session, to_wipe)
    wiper.submit(to_wipe)
    return released
