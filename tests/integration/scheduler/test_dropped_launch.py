"""A launch the master drops because the offer it used was no longer valid (rescinded while the
framework placed on it: the node's resources had just changed) never ran: the member is placed
again, its disks released first, and neither it nor its cluster fails. Any other drop, or one of a
cluster being deleted, ends the task as before."""
from spindle_scheduler.models import Task
from tests.support.framework import update

INVALID = "REASON_INVALID_OFFERS"


def launching(store, task_id="m1.a", member_id="m1", kind=None):
    request = {"cpus": 1, "mem_mb": 64, **({"kind": kind} if kind else {})}
    store.add([Task(task_id=task_id, cluster_id="c1", member_id=member_id, request=request, state="LAUNCHING",
                    hostname="spdl-n2", agent_id="agent-2", disk_roots=["/d/spdl-n2-1"], ip="10.0.0.5",
                    launches=1)])


def test_a_launch_dropped_on_an_invalid_offer_is_placed_again(setup):
    framework, store, driver, released = setup
    launching(store)
    framework.statusUpdate(driver, update("m1.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    task = store.get_member("c1", "m1")
    assert task.state == "PENDING" and task.task_id != "m1.a"
    assert task.hostname is None and task.disk_roots == [] and task.ip is None
    assert task.launches == 1, "for the orchestrator nothing ended: no replacement is counted"
    assert "dropped the launch" in task.message
    assert released == [["m1"]] and driver.revived == 1
    # The master's update is redelivered (not acknowledged in time): the old id is gone, nothing changes.
    framework.statusUpdate(driver, update("m1.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    assert store.get_member("c1", "m1").task_id == task.task_id and released == [["m1"]]


def test_a_framework_that_is_not_partition_aware_hears_task_lost_and_retries_the_same(setup):
    framework, store, driver, released = setup
    launching(store)
    framework.statusUpdate(driver, update("m1.a", "TASK_LOST", "offer no longer valid", INVALID))
    assert store.get_member("c1", "m1").state == "PENDING" and released == [["m1"]]


def test_a_dropped_job_driver_is_placed_again_holding_no_disks(setup):
    framework, store, driver, released = setup
    launching(store, "job-j1.a", "job-j1", kind="job")
    framework.statusUpdate(driver, update("job-j1.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    assert store.get_member("c1", "job-j1").state == "PENDING" and released == [[]]


def test_a_drop_for_another_reason_ends_the_task(setup):
    framework, store, driver, released = setup
    launching(store)
    framework.statusUpdate(driver, update("m1.a", "TASK_DROPPED", "agent removed", "REASON_AGENT_REMOVED"))
    assert store.get("m1.a").state == "TASK_DROPPED" and released == [["m1"]]


def test_a_task_that_already_ran_is_not_placed_again(setup):
    framework, store, driver, released = setup  # m0.a is TASK_RUNNING in the fixture
    framework.statusUpdate(driver, update("m0.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    assert store.get("m0.a").state == "TASK_DROPPED" and driver.revived == 0


def test_a_dropped_launch_of_a_cluster_being_deleted_ends(setup):
    framework, store, driver, released = setup
    launching(store)
    store.request_kill("c1")
    framework.statusUpdate(driver, update("m1.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    assert store.get("m1.a").state == "TASK_DROPPED", "a kill was asked for: it stays ended"
    assert driver.revived == 0


def test_a_dropped_launch_whose_disks_cannot_be_freed_ends_and_is_released_later(setup):
    framework, store, driver, released = setup
    launching(store)

    def unavailable(owners):
        raise RuntimeError("disk-service answered 503")

    framework.launcher.release_disks = unavailable
    framework.statusUpdate(driver, update("m1.a", "TASK_DROPPED", "offer no longer valid", INVALID))
    assert store.get("m1.a").state == "TASK_DROPPED" and released == [["m1"]]  # the usual release path
