"""The pure part of per-cluster disk batches: which request is satisfied already, which needs
disks, which conflicts, and which one a short node fails first."""
import pytest

from spindle_common.errors import ApiError
from spindle_disk.batch import Ask, HeldRow, check_consistent, first_unsatisfiable, plan


def held(owner, disk_id, node="n1", disk_class="hdd"):
    return HeldRow(owner, disk_id, node, disk_class, f"/dev/sd{disk_id}", f"/data/{disk_id}", 1 << 40)


ASKS = [Ask("m0", "n1", "hdd", 2), Ask("m0", "n1", "ssd", 1), Ask("m1", "n2", "hdd", 2)]


def test_nothing_held_everything_needed():
    result = plan(ASKS, [])
    assert result.reuse == {} and result.need == [0, 1, 2]


def test_exactly_held_is_reused_in_disk_order_and_the_rest_needed():
    rows = [held("m0", 7), held("m0", 3), held("m1", 9, node="n2"), held("m1", 8, node="n2")]
    result = plan(ASKS, rows)
    assert [r.id for r in result.reuse[0]] == [3, 7] and [r.id for r in result.reuse[2]] == [8, 9]
    assert result.need == [1], "m0 holds no ssd yet"


def test_another_count_of_the_class_is_a_409_naming_the_request():
    with pytest.raises(ApiError) as exc:
        plan(ASKS, [held("m1", 9, node="n2")])
    assert (exc.value.status, exc.value.code) == (409, "OWNER_HOLDS_OTHER_COUNT")
    assert exc.value.details["request"] == 2 and exc.value.details["held"] == [9]


def test_disks_on_another_node_are_a_409():
    with pytest.raises(ApiError) as exc:
        plan(ASKS, [held("m1", 9, node="n1")])
    assert exc.value.code == "OWNER_ON_OTHER_NODE"
    assert exc.value.details == {"request": 2, "owner": "m1", "node": "n2", "disk_class": "hdd", "requested": 2,
                                 "nodes": ["n1"]}


def test_a_batch_names_an_owner_once_per_class_and_on_one_node():
    check_consistent(ASKS)
    with pytest.raises(ValueError, match=r"requests\[1\].*twice"):
        check_consistent([Ask("a", "n1", "hdd", 1), Ask("a", "n1", "hdd", 2)])
    with pytest.raises(ValueError, match=r"requests\[1\].*one owner's disks are on one node"):
        check_consistent([Ask("a", "n1", "hdd", 1), Ask("a", "n2", "ssd", 1)])


def test_the_first_request_that_runs_out_is_named():
    asks = [Ask("a", "n1", "hdd", 2), Ask("b", "n2", "hdd", 2), Ask("c", "n1", "hdd", 2), Ask("d", "n1", "hdd", 1)]
    assert first_unsatisfiable(asks, [0, 1, 2, 3], {("n1", "hdd"): 5, ("n2", "hdd"): 2}) is None
    assert first_unsatisfiable(asks, [0, 1, 2, 3], {("n1", "hdd"): 4, ("n2", "hdd"): 2}) == 3
    assert first_unsatisfiable(asks, [0, 1, 2, 3], {("n1", "hdd"): 3, ("n2", "hdd"): 2}) == 2
    assert first_unsatisfiable(asks, [1], {("n2", "hdd"): 1}) == 1
