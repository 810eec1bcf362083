"""The plan's one-line summary: every node when few, grouped by constraint when many."""
from spindle_scheduler.placement import Placement, Plan, Reason


def test_a_placed_plan_counts_its_members():
    assert Plan([Placement("m1", "n0", ["d"], [])], {}).summary() == "1 member placed"


def test_few_nodes_are_each_named():
    plan = Plan([], {"m2": [Reason("n0", "disks", "needs 2 ssd disks, 1 free"),
                            Reason("n1", "cpus", "needs 4 cpus, 2.5 free")]})
    assert plan.summary() == "m2 fits no node: n0: needs 2 ssd disks, 1 free; n1: needs 4 cpus, 2.5 free"


def test_many_nodes_are_grouped_by_the_short_resource_with_an_example():
    reasons = [Reason(f"n{i}", "disks", "needs 2 ssd disks, 1 free") for i in range(8)] + \
        [Reason("n8", "mem", "needs 8192 MiB memory, 4096 free")]
    plan = Plan([], {"m1": reasons, "m2": reasons})
    assert plan.summary() == ("m1 fits no node: 8 of 9 nodes short on disks, e.g. n0: needs 2 ssd disks, 1 free; "
                              "1 of 9 nodes short on mem, e.g. n8: needs 8192 MiB memory, 4096 free"
                              " (and 1 more unplaceable member)")
