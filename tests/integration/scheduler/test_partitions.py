"""The framework's side of a network partition (PARTITION_AWARE), on a real task store: a task on
an unreachable node is recorded as such, replaced only when the orchestrator asks (its disks released
first, its old task killed), killed if its node comes back after it was given up, and ended for
Spindle when its cluster is deleted while its node is away."""
from spindle_scheduler.mesos.framework import framework_info
from tests.support.framework import update


def test_the_framework_says_it_is_partition_aware():
    assert {"type": "PARTITION_AWARE"} in framework_info(None)["capabilities"]


def test_unreachable_is_recorded_and_holds_its_disks(setup):
    framework, store, driver, released = setup
    framework.statusUpdate(driver, update("m0.a", "TASK_UNREACHABLE", "agent removed"))
    task = store.get("m0.a")
    assert task.state == "TASK_UNREACHABLE" and task.message.startswith("node spdl-n1 unreachable")
    assert released == [] and driver.killed == []  # its data may come back with its node

    framework.statusUpdate(driver, update("m0.a", "TASK_RUNNING"))  # the partition healed
    assert store.get("m0.a").state == "TASK_RUNNING" and driver.killed == []


def test_replacing_an_unreachable_member_releases_its_disks_and_kills_the_old_task(setup):
    framework, store, driver, released = setup
    framework.statusUpdate(driver, update("m0.a", "TASK_UNREACHABLE"))
    new = framework.relaunch(driver, "c1", "m0", launches_seen=1, reason="node lost")
    assert new.state == "PENDING" and new.task_id != "m0.a" and new.launches == 2
    assert released == [["m0"]] and driver.killed == ["m0.a"] and driver.revived == 1
    assert framework.relaunch(driver, "c1", "m0", launches_seen=1, reason="again").task_id == new.task_id
    assert released == [["m0"]], "a repeated relaunch changes nothing"

    # The node comes back and its agent reports the old task running: it is killed, nothing released.
    framework.statusUpdate(driver, update("m0.a", "TASK_RUNNING"))
    assert driver.killed == ["m0.a", "m0.a"] and released == [["m0"]]
    assert store.get_member("c1", "m0").task_id == new.task_id


def test_a_task_given_up_is_killed_when_its_node_returns(setup):
    framework, store, driver, released = setup
    framework.statusUpdate(driver, update("m0.a", "TASK_UNREACHABLE"))
    framework.kill_cluster(driver, "c1")  # delete while the node is away
    task = store.get("m0.a")
    assert task.state == "TASK_LOST" and "unreachable" in task.message
    assert driver.killed == ["m0.a"] and released == [["m0"]]

    framework.statusUpdate(driver, update("m0.a", "TASK_RUNNING"))
    assert store.get("m0.a").state == "TASK_LOST", "an ended task does not come back"
    assert driver.killed == ["m0.a", "m0.a"]
