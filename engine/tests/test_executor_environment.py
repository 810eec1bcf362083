"""What an executor process is given: its CPUs when `executor.affinity` asks for pinning, and
native thread pools (BLAS, OpenMP) sized to its own cores rather than the machine's."""

import os

import pytest

from spindle_engine import Cluster, Properties, Worker

CPP = os.path.join(os.path.dirname(__file__), "..", "cpp", "build")
CPUS = sorted(os.sched_getaffinity(0))


def _worker(language, affinity):
    cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": len(CPUS),
                                  "executor.affinity": str(affinity).lower()}))
    return cluster, Worker(cluster, language)


def _thread_cpus(pid):
    """The CPU set of every thread of process `pid`."""
    return [os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")]


def test_python_executors_get_one_thread_per_native_pool(engine):
    cluster, worker = _worker("python", affinity=False)
    try:
        seen = worker.parallelize(range(8), 4).map(
            lambda _: (os.environ.get("OMP_NUM_THREADS"), os.environ.get("OPENBLAS_NUM_THREADS"))).collect()
        assert set(seen) == {("1", "1")}  # one process per core, so one native thread each
        assert all(os.sched_getaffinity(pid) == set(CPUS) for pid in worker.executor_pids())
    finally:
        cluster.stop()


def test_python_executors_pinned_one_per_cpu(engine):
    cluster, worker = _worker("python", affinity=True)
    try:
        assert sum(worker.parallelize(range(100), 4).map(lambda x: x * 2).collect()) == 9900
        pinned = [os.sched_getaffinity(pid) for pid in worker.executor_pids()]
        assert pinned == [{cpu} for cpu in CPUS]
    finally:
        cluster.stop()


@pytest.mark.skipif(not os.access(os.path.join(CPP, "spindle-cpp-executor"), os.X_OK),
                    reason="C++ executor not built")
def test_cpp_connection_threads_pinned_one_per_cpu(engine):
    cluster, worker = _worker("cpp", affinity=True)
    try:
        for slot in worker.slots:  # a connection per slot, as a job opens when all its slots run
            slot.connect(worker.properties)
        assert worker.parallelize(range(1000), 8).count() == 1000
        [pid] = worker.executor_pids()
        with open(f"/proc/{pid}/environ", "rb") as f:
            assert f"OMP_NUM_THREADS={len(CPUS)}".encode() in f.read().split(b"\0")
        single = {min(cpus) for cpus in _thread_cpus(pid) if len(cpus) == 1}
        assert single == set(CPUS)  # each connection thread on its own CPU, every CPU used
    finally:
        cluster.stop()
