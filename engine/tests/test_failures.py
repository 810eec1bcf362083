"""Bad input: missing functions, raising functions, lost executors. The engine stays usable."""

import os
import signal
import threading
import time

import pytest

from spindle_engine import Cluster, EngineError, Properties, Worker


@pytest.fixture(scope="module")
def marker(tmp_path_factory):
    return str(tmp_path_factory.mktemp("marker") / "started")


@pytest.fixture(scope="module")
def worker(engine, marker):
    cluster = Cluster(Properties({"executor.instances": 2, "test.marker": marker}))
    yield Worker(cluster, "python")
    cluster.stop()


def _still_works(worker):
    assert worker.parallelize(range(100), 4).map(lambda x: x * 2).reduce(lambda a, b: a + b) \
        == 9900


@pytest.mark.parametrize("ref, needle", [
    ("faulty.py:NoSuchClass", "has no attribute 'NoSuchClass'"),
    ("no_such_file.py:Split", "does not exist"),
    ("not_a_class.py:VALUE", "neither a class"),
])
def test_missing_function_reference(worker, fn, ref, needle):
    with pytest.raises(EngineError) as err:
        worker.parallelize(range(10), 2).map(fn(ref)).collect()
    e = err.value
    assert e.kind == "FUNCTION_NOT_FOUND"
    assert e.function == fn(ref) and fn(ref) in str(e)
    assert needle in str(e)
    assert e.partition in (0, 1) and f"partition {e.partition}" in str(e)
    _still_works(worker)


def test_function_that_raises_names_function_and_partition(worker, fn):
    ds = worker.parallelize(range(40), 4)  # 13 is in partition 1
    with pytest.raises(EngineError) as err:
        ds.map(fn("ops.py:AddOne")).map(fn("faulty.py:Raises")).count()
    e = err.value
    assert e.kind == "FUNCTION_FAILED"
    assert e.function == fn("faulty.py:Raises")
    assert e.partition == 1
    assert "thirteen is unlucky" in str(e) and "partition 1" in str(e)
    _still_works(worker)


def test_raising_lambda_and_reducer(worker):
    with pytest.raises(EngineError) as err:
        worker.parallelize([1, 0], 1).map(lambda x: 1 // x).collect()
    assert "ZeroDivisionError" in str(err.value) and "<lambda>" in err.value.function
    with pytest.raises(EngineError) as err:
        worker.parallelize([("a", 1), ("a", "x")], 1).reduceByKey(lambda a, b: a + b).collect()
    assert err.value.kind == "FUNCTION_FAILED" and "TypeError" in str(err.value)
    _still_works(worker)


def test_broken_before_hook(worker, fn):
    with pytest.raises(EngineError) as err:
        worker.parallelize(range(4), 2).map(fn("faulty.py:BrokenBefore")).collect()
    assert "before()" in str(err.value) and "cannot open the database" in str(err.value)
    _still_works(worker)


def test_executor_killed_mid_job_is_retried(worker, fn, marker):
    pids = set(worker.executor_pids())
    ds = worker.parallelize(range(1000), 4).map(fn("faulty.py:SlowFirstAttempt"))
    result = {}
    job = threading.Thread(target=lambda: result.setdefault("sum", sum(ds.collect())))
    job.start()
    while not os.path.exists(marker):
        time.sleep(0.02)
    with open(marker) as f:
        victim = int(f.read())
    assert victim in pids
    os.kill(victim, signal.SIGKILL)
    job.join()
    assert result["sum"] == sum(range(1000))
    assert victim not in worker.executor_pids()
    assert worker.metrics["executors_lost"] >= 1
    _still_works(worker)


def test_function_that_always_kills_its_executor(worker, fn):
    with pytest.raises(EngineError) as err:
        worker.parallelize(range(6), 2).map(fn("faulty.py:KillsItsExecutor")).collect()
    e = err.value
    assert e.kind == "EXECUTOR_LOST"
    assert fn("faulty.py:KillsItsExecutor") in str(e) and "partition" in str(e)
    _still_works(worker)


def test_cached_partitions_lost_with_their_executor_are_recomputed(worker):
    ds = worker.parallelize(range(200), 4).map(lambda x: x + 1).cache()
    assert ds.count() == 200
    os.kill(worker.executor_pids()[0], signal.SIGKILL)
    time.sleep(0.1)
    assert sorted(ds.collect()) == list(range(1, 201))
    _still_works(worker)


def test_cpp_functions_refused_on_python_objects(engine):
    cluster = Cluster(Properties({"executor.instances": 1}))
    try:
        if not os.access(os.path.join(os.path.dirname(__file__), "..", "cpp", "build",
                                      "spindle-cpp-executor"), os.X_OK):
            with pytest.raises(EngineError, match="not built"):
                Worker(cluster, "cpp")
            return
        cpp = Worker(cluster, "cpp")
        with pytest.raises(ValueError, match="by reference"):
            cpp.parallelize([1]).map(lambda x: x)
    finally:
        cluster.stop()


def test_hung_task_times_out_as_lost_executor(engine, fn):
    cluster = Cluster(Properties({"executor.instances": 1, "task.timeout_s": "0.5",
                                  "task.max_failures": 2}))
    try:
        worker = Worker(cluster, "python")
        with pytest.raises(EngineError) as err:
            worker.parallelize([1], 1).map(fn("faulty.py:Hangs")).collect()
        assert err.value.kind == "EXECUTOR_LOST" and fn("faulty.py:Hangs") in str(err.value)
        assert worker.metrics["executors_lost"] == 2
        _still_works(worker)
    finally:
        cluster.stop()
