"""The disk state machine: every allowed edge, and everything else refused with a 409 value."""
import pytest

from spindle_disk.states import TRANSITIONS, IllegalTransition, can_transition, check_transition

STATES = ["free", "allocated", "wiping", "failed", "retired"]
ALLOWED = {
    ("free", "allocated"), ("allocated", "wiping"), ("wiping", "free"), ("free", "retired"),
    ("free", "failed"), ("allocated", "failed"), ("wiping", "failed"), ("retired", "failed"),
    ("failed", "wiping"),
}


@pytest.mark.parametrize("current", STATES)
@pytest.mark.parametrize("wanted", STATES)
def test_exactly_the_documented_edges_are_allowed(current, wanted):
    assert can_transition(current, wanted) == ((current, wanted) in ALLOWED)


def test_every_state_can_be_quarantined_except_failed_itself():
    assert all(can_transition(s, "failed") for s in STATES if s != "failed")


def test_illegal_transition_is_a_409_with_details():
    with pytest.raises(IllegalTransition) as caught:
        check_transition(7, "allocated", "free")
    error = caught.value
    assert (error.status, error.code) == (409, "ILLEGAL_TRANSITION")
    assert error.details == {"disk_id": 7, "from": "allocated", "to": "free", "allowed": ["failed", "wiping"]}


def test_the_lifecycle_is_a_cycle_through_wiping():
    path = ["free", "allocated", "wiping", "free"]
    for current, wanted in zip(path, path[1:], strict=False):  # consecutive pairs
        check_transition(1, current, wanted)
    assert set(TRANSITIONS) == set(STATES)
