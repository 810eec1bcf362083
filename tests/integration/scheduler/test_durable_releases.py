"""Releases an ended task owes are durable (a real task store): recorded with the task's end, tried
until they work — across a restart of the scheduler (a new framework on the same store) — and never
confused with the disks a relaunch of the same member holds afterwards."""
import threading
import time

import pytest

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_common.errors import ApiError
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore
from tests.support.framework import RecordingDriver, update


class FlakyRelease:
    """A release that fails while ``down`` (disk-service away), recording each attempt."""

    def __init__(self):
        self.down = True
        self.attempts: list[str] = []
        self.done: list[str] = []

    def __call__(self, task) -> None:
        self.attempts.append(task.task_id)
        if self.down:
            raise ApiError(503, "SERVICE_UNAVAILABLE", "http://127.0.0.1:8083 is unreachable")
        self.done.append(task.member_id)


@pytest.fixture
def store(fresh_database):
    migrations.upgrade("spindle_scheduler", fresh_database)
    store = TaskStore(session_factory(fresh_database))
    store.add([Task(task_id="m0.a", cluster_id="c1", member_id="m0", request={"cpus": 1, "mem_mb": 64},
                    state="TASK_RUNNING", hostname="spdl-n1", agent_id="agent-1", launches=1)])
    return store


def framework_on(store, release) -> SpindleFramework:
    framework = SpindleFramework(store, launcher=None, release=release)
    framework.releases.first_retry_s = framework.releases.max_retry_s = 0.01
    return framework


def test_a_release_that_fails_is_owed_durably_and_resumed_by_the_next_scheduler(store):
    release = FlakyRelease()
    first = framework_on(store, release)
    first.statusUpdate(RecordingDriver(), update("m0.a", "TASK_KILLED", "killed"))
    task = store.get("m0.a")
    assert task.state == "TASK_KILLED" and task.release_owed, "the end and the debt are one transaction"
    assert task.release_attempts == 1 and "unreachable" in task.release_error
    later = time.monotonic() + 60  # the retry is due (not: "10 ms have passed since the failure")
    first.releases.clock = lambda: later
    assert first.releases.run_once() is not None  # still owed, retried later
    assert store.get("m0.a").release_attempts == 2

    # The scheduler restarts (nothing of the first process' memory survives) while disk-service is back.
    release.down = False
    second = framework_on(store, release)
    stop = threading.Event()
    worker = threading.Thread(target=second.releases.run, args=(stop,), daemon=True)
    worker.start()
    try:
        for _ in range(200):
            if not store.get("m0.a").release_owed:
                break
            stop.wait(0.05)
    finally:
        stop.set()
        worker.join(5)
    task = store.get("m0.a")
    assert not task.release_owed and task.released_at is not None and task.release_error == ""
    assert release.done == ["m0"], "released once, when disk-service answered"
    assert second.releases.run_once() is None and release.done == ["m0"], "nothing owed any more"


def test_a_relaunch_settles_the_old_release_first(store):
    release = FlakyRelease()
    framework = framework_on(store, release)
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("m0.a", "TASK_FAILED", "exited 1"))
    with pytest.raises(ApiError) as refused:  # disk-service still away: no new task may hold disks as m0
        framework.relaunch(driver, "c1", "m0", launches_seen=1, reason="died")
    assert refused.value.status == 503 and refused.value.code == "RELEASE_PENDING"
    assert store.get_member("c1", "m0").task_id == "m0.a" and driver.revived == 0

    release.down = False
    new = framework.relaunch(driver, "c1", "m0", launches_seen=1, reason="died")
    assert new.state == "PENDING" and new.launches == 2 and release.done == ["m0"]
    assert not new.release_owed and driver.revived == 1


def test_a_task_ended_before_launch_owes_a_release_too(store):
    release = FlakyRelease()
    release.down = False
    store.add([Task(task_id="m1.a", cluster_id="c2", member_id="m1", request={"cpus": 1, "mem_mb": 64},
                    state="PENDING", launches=1)])
    framework = framework_on(store, release)
    framework.kill_cluster(RecordingDriver(), "c2")
    assert store.get("m1.a").state == "TASK_KILLED" and store.get("m1.a").release_owed
    framework.releases.run_once()
    assert not store.get("m1.a").release_owed and release.done == ["m1"]


def test_the_sweep_makes_an_ended_task_owe_its_release_again(store):
    store.set("m0.a", state="TASK_KILLED")
    store.release_done("m0.a")
    assert store.owe_release_again(["m0", "unknown"]) == ["m0"]
    assert store.get("m0.a").release_owed
    assert store.owe_release_again(["m0"]) == [], "already owed"
    store.add([Task(task_id="m2.a", cluster_id="c3", member_id="m2", request={}, state="TASK_RUNNING", launches=1)])
    assert store.owe_release_again(["m2"]) == [], "a live task owes nothing"
