"""A status update that tells the scheduler nothing new changes nothing (a real task store and a real
PostgreSQL listener): the master sends an update again until the framework acknowledges it, and
answers a reconciliation with what it knows. Neither may wake the orchestrator (it would reconcile a
RUNNING cluster for nothing) nor overwrite a task's message with "reconciliation"."""
import queue

import pytest

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_common.notify import TASKS, Listener
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore
from tests.support.framework import RecordingDriver, update

HEALTHY = "container c1-web-1 healthy"


@pytest.fixture
def scheduler(fresh_database):
    migrations.upgrade("spindle_scheduler", fresh_database)
    store = TaskStore(session_factory(fresh_database))
    store.add([Task(task_id="w1.a", cluster_id="c1", member_id="c1-web-1", request={"cpus": 1, "mem_mb": 64},
                    state="TASK_RUNNING", message=HEALTHY, hostname="spdl-n1", agent_id="agent-1", launches=1)])
    heard: queue.SimpleQueue[str] = queue.SimpleQueue()
    listener = Listener(fresh_database, [TASKS], lambda _channel, cluster_id: heard.put(cluster_id)).start()
    assert listener.connected.wait(10), "listening on the task store"
    try:
        yield SpindleFramework(store, launcher=None, release=lambda task: None), store, heard
    finally:
        listener.stop()


def heard_until_change(framework, store, heard) -> list[str]:
    """Make one real change after what the test did; every notification up to and including its own
    (PostgreSQL delivers them in commit order)."""
    framework.statusUpdate(RecordingDriver(), update("w1.a", "TASK_FAILED", "exited 1"))
    got = [heard.get(timeout=10)]
    while not heard.empty():
        got.append(heard.get_nowait())
    assert store.get("w1.a").state == "TASK_FAILED"
    return got


def test_an_update_sent_again_writes_and_wakes_nothing(scheduler):
    framework, store, heard = scheduler
    before = store.get("w1.a").updated_at
    for _ in range(3):  # the master resends an update not acknowledged in time
        framework.statusUpdate(RecordingDriver(), update("w1.a", "TASK_RUNNING", HEALTHY))
    assert store.get("w1.a").updated_at == before, "nothing written"
    assert heard_until_change(framework, store, heard) == ["c1"], "only the real change was heard"


def test_a_reconciliation_that_confirms_the_state_keeps_the_message_and_wakes_nothing(scheduler):
    framework, store, heard = scheduler
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("w1.a", "TASK_RUNNING", "reconciliation", reason="REASON_RECONCILIATION"))
    task = store.get("w1.a")
    assert (task.state, task.message) == ("TASK_RUNNING", HEALTHY) and driver.killed == []
    assert heard_until_change(framework, store, heard) == ["c1"], "only the real change was heard"


def test_a_reconciliation_still_kills_a_task_whose_kill_was_asked(scheduler):
    framework, store, _heard = scheduler
    store.set("w1.a", kill_requested=True)
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("w1.a", "TASK_RUNNING", "reconciliation", reason="REASON_RECONCILIATION"))
    assert driver.killed == ["w1.a"], "the kill is asked again"


def test_a_reconciliation_that_tells_something_new_is_recorded(scheduler):
    framework, store, heard = scheduler
    framework.statusUpdate(RecordingDriver(), update("w1.a", "TASK_LOST", "reconciliation: unknown task",
                                                     reason="REASON_RECONCILIATION"))
    task = store.get("w1.a")
    assert (task.state, task.message) == ("TASK_LOST", "reconciliation: unknown task")
    assert task.released_at is not None, "its end owed its release, and it was done"
    assert heard.get(timeout=10) == "c1"
