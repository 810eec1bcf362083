"""Moving a disk between states: checked against the state machine and written to the audit log."""
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from spindle_disk.models import Disk, DiskTransition
from spindle_disk.states import check_transition


def move(session: Session, disk: Disk, to: str, actor: str, owner: str | None = None,
         reason: str | None = None) -> None:
    """Change ``disk``'s state to ``to`` (raises IllegalTransition first) and record who, why, for whom.

    The caller holds the disk's row lock and commits.
    """
    check_transition(disk.id, disk.state, to)
    session.add(DiskTransition(disk_id=disk.id, from_state=disk.state, to_state=to, actor=actor,
                               owner=owner, reason=reason))
    disk.state = to
    disk.state_reason = reason
    disk.updated_at = func.now()


def record_creation(session: Session, disk: Disk, actor: str) -> None:
    """The first audit row of a disk: it entered the inventory (as free)."""
    session.add(DiskTransition(disk_id=disk.id, from_state=None, to_state=disk.state, actor=actor,
                               reason="discovered"))


def history(session: Session, disk_id: int) -> list[DiskTransition]:
    """A disk's transitions, oldest first."""
    return list(session.scalars(
        select(DiskTransition).where(DiskTransition.disk_id == disk_id).order_by(DiskTransition.id)
    ))
