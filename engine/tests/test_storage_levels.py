"""Storage levels: every level gives the same results on reuse without recomputing, and
RAW_MEMORY (encoded + zlib) holds far less executor memory than MEMORY (objects), measured as
the executor process' resident set growth."""

import pytest

from spindle_engine import Cluster, Properties, StorageLevel, Worker


def _rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


@pytest.fixture
def single(engine):
    cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": 1}))
    try:
        yield Worker(cluster, "python")
    finally:
        cluster.stop()


def _rows(n):
    return [(i % 1000, f"user-{i % 5000:05d} clicked item {i % 997} from page {i % 13}")
            for i in range(n)]


@pytest.mark.parametrize("level", [StorageLevel.MEMORY, StorageLevel.RAW_MEMORY,
                                   StorageLevel.DISK, StorageLevel.MEMORY_AND_DISK])
def test_each_level_is_reused_with_the_same_result(single, level):
    rows = _rows(20_000)
    ds = single.parallelize(rows, 1).map(lambda kv: (kv[0], kv[1].upper())).persist(level)
    first = sorted(ds.collect())
    tasks = single.metrics["tasks"]
    assert sorted(ds.collect()) == first == sorted((k, v.upper()) for k, v in rows)
    assert ds.reduceByKey(lambda a, b: min(a, b)).count() == 1000
    assert single.metrics["tasks"] - tasks == 1 + 1 + 1  # collect, shuffle map, reduce count


def test_raw_memory_holds_much_less_than_objects(engine):
    """Each level in a fresh executor: persist 4 copies of the same data; the executor's resident
    memory growth from the 1st to the 4th copy is what 3 copies hold (the transient memory of
    encoding or decoding is paid once, before the 1st, and reused)."""
    held, stored = {}, {}
    for level in (StorageLevel.MEMORY, StorageLevel.RAW_MEMORY):
        cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": 1}))
        try:
            worker = Worker(cluster, "python")
            pid = worker.executor_pids()[0]
            base = worker.parallelize(_rows(200_000), 1)
            copies = [base.map(lambda kv: kv).persist(level) for _ in range(4)]
            assert copies[0].count() == 200_000
            after_first = _rss(pid)
            assert sum(c.count() for c in copies[1:]) == 3 * 200_000
            held[level] = (_rss(pid) - after_first) / 3
            stored[level] = sum(b or 0 for b in copies[0].storage.stored_bytes.values())
        finally:
            cluster.stop()
    assert 0 < stored[StorageLevel.RAW_MEMORY] < held[StorageLevel.MEMORY] / 5, (stored, held)
    assert held[StorageLevel.RAW_MEMORY] < held[StorageLevel.MEMORY] / 4, held
