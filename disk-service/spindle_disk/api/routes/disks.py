"""Disks (admin): list and filter, edit class and labels, retire, mark failed, wipe; audit log."""
from typing import Annotated

from fastapi import APIRouter, Query

from spindle_common.auth import require_own_node
from spindle_common.contracts import DiskClass, DiskState
from spindle_disk import inventory, schemas, transitions, wipe
from spindle_disk.api.deps import Admin, ServiceNodeOrAdmin, ServiceOrAdmin, SessionDep, WiperDep
from spindle_disk.states import FAILED, RETIRED, WIPING

router = APIRouter(prefix="/disks", tags=["disks"])


@router.get("", response_model=schemas.DiskPage)
def list_disks(
    session: SessionDep, _: ServiceNodeOrAdmin,
    node: str | None = None,
    state: DiskState | None = None,
    disk_class: Annotated[DiskClass | None, Query(alias="class")] = None,
    owner: str | None = None,
    page_size: Annotated[int, Query(ge=1, le=1000)] = 100,
    page_token: str | None = None,
):
    """Disks filtered by node, state, class and owner, in pages (pass back ``next_page_token``)."""
    return inventory.list_disks(session, node, state, disk_class, owner, page_size, page_token)


@router.get("/{disk_id}", response_model=schemas.DiskOut)
def get_disk(disk_id: int, session: SessionDep, _: ServiceOrAdmin):
    return inventory.disk_out(session, disk_id)


@router.patch("/{disk_id}", response_model=schemas.DiskOut)
def edit_disk(disk_id: int, body: schemas.DiskUpdate, session: SessionDep, _: Admin):
    """Set the disk's class and/or replace its labels."""
    inventory.update_disk(session, disk_id, body)
    return inventory.disk_out(session, disk_id)


@router.post("/{disk_id}/retire", response_model=schemas.DiskOut)
def retire_disk(disk_id: int, body: schemas.StateChangeRequest, session: SessionDep, caller: Admin):
    """Take a free disk out of service for good."""
    inventory.change_state(session, disk_id, RETIRED, caller.actor, body.reason)
    return inventory.disk_out(session, disk_id)


@router.post("/{disk_id}/fail", response_model=schemas.DiskOut)
def mark_failed(disk_id: int, body: schemas.StateChangeRequest, session: SessionDep, caller: Admin):
    """Quarantine a disk (from any state); it is no longer offered or allocated."""
    inventory.change_state(session, disk_id, FAILED, caller.actor, body.reason or "marked failed by admin")
    return inventory.disk_out(session, disk_id)


@router.post("/{disk_id}/wipe", response_model=schemas.DiskOut)
def wipe_failed_disk(disk_id: int, body: schemas.StateChangeRequest, session: SessionDep, caller: Admin,
                     wiper: WiperDep):
    """Repair a failed disk: wipe it (in the background) and make it free again if that works."""
    inventory.change_state(session, disk_id, WIPING, caller.actor, body.reason or "wipe requested by admin")
    wiper.submit([disk_id])
    return inventory.disk_out(session, disk_id)


@router.post("/{disk_id}/wipe-result", response_model=schemas.DiskOut)
def report_wipe(disk_id: int, body: schemas.WipeResult, session: SessionDep, caller: ServiceNodeOrAdmin):
    """A remote node reports the wipe it ran: ``wiping`` → ``free``, or → ``failed``. A node
    reports only its own disks."""
    if caller.role == "node":
        require_own_node(caller, inventory.disk_out(session, disk_id).node)
    wipe.finish(session, disk_id, body.ok, body.reason or "wipe failed on the node", caller.actor)
    return inventory.disk_out(session, disk_id)


@router.get("/{disk_id}/transitions", response_model=list[schemas.TransitionOut])
def disk_history(disk_id: int, session: SessionDep, _: Admin):
    """The disk's audit log: every state change, who made it, when, for which owner."""
    inventory.disk_or_404(session, disk_id)
    return transitions.history(session, disk_id)
