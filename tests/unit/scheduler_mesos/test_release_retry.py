"""An ended task's resources are freed even when a service is briefly away, and a failing release
never escapes into the driver's event thread (it would stop the framework)."""
import threading
from types import SimpleNamespace

from spindle_scheduler.mesos.framework import SpindleFramework


def framework_with(release) -> SpindleFramework:
    fw = SpindleFramework(store=None, launcher=None, release=release)
    fw.release_retry_s = 0.01
    return fw


def test_a_failing_release_is_retried_in_the_background_until_it_works():
    calls, done = [], threading.Event()

    def release(task):
        calls.append(task.task_id)
        if len(calls) < 3:
            raise RuntimeError("network-service answered 500")
        done.set()

    framework_with(release)._release_soon(SimpleNamespace(task_id="t1"))  # returns, does not raise
    assert done.wait(5)
    assert calls == ["t1", "t1", "t1"]


def test_a_release_that_works_is_done_once_at_once():
    calls = []
    framework_with(lambda task: calls.append(task.task_id))._release_soon(SimpleNamespace(task_id="t2"))
    assert calls == ["t2"]
