"""The disk state machine, as pure data: which state may follow which.

    free ──allocate──▶ allocated ──release──▶ wiping ──wiped──▶ free
    free ──retire──▶ retired          any state ──fail──▶ failed (quarantine)
    failed ──wipe (admin repair)──▶ wiping

Every change goes through :func:`check_transition`; callers record it in the audit log.
"""
from spindle_common.contracts import DiskState
from spindle_common.errors import ApiError

FREE, ALLOCATED, WIPING, FAILED, RETIRED = (DiskState.FREE.value, DiskState.ALLOCATED.value, DiskState.WIPING.value,
                                            DiskState.FAILED.value, DiskState.RETIRED.value)

TRANSITIONS: dict[str, frozenset[str]] = {
    FREE: frozenset({ALLOCATED, RETIRED, FAILED}),
    ALLOCATED: frozenset({WIPING, FAILED}),
    WIPING: frozenset({FREE, FAILED}),
    FAILED: frozenset({WIPING}),
    RETIRED: frozenset({FAILED}),
}

# States whose disks an agent offers to Mesos (the disk exists and is, or will be, in use).
OFFERED_STATES = frozenset({FREE, ALLOCATED})


class IllegalTransition(ApiError):
    """A state change the machine does not allow; the API returns it as 409 and changes nothing."""

    def __init__(self, disk_id: int, current: str, wanted: str):
        super().__init__(
            409, "ILLEGAL_TRANSITION", f"disk {disk_id} cannot go from {current} to {wanted}",
            {"disk_id": disk_id, "from": current, "to": wanted, "allowed": sorted(TRANSITIONS[current])},
        )


def can_transition(current: str, wanted: str) -> bool:
    return wanted in TRANSITIONS.get(current, frozenset())


def check_transition(disk_id: int, current: str, wanted: str) -> None:
    """Raise :class:`IllegalTransition` unless ``current → wanted`` is an edge of the machine."""
    if not can_transition(current, wanted):
        raise IllegalTransition(disk_id, current, wanted)
