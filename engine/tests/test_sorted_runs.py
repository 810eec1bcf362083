"""Sort's map side writes runs of bare records while every sort key is the record itself (runs
flagged SELF_KEYED, FORMAT.md) and (key, record) pairs otherwise; the reduce side merges both
kinds, also within one bucket and after spilling."""

import os
import random

import pytest

from spindle_engine import Cluster, Properties, Worker


def _mixed_key(x):
    return x if x < 0.5 else x * 1.0  # equal value, but a new object above 0.5


@pytest.mark.parametrize("memory", ["1GB", "64KB"])  # 64KB: runs spill
def test_self_keyed_and_pair_runs_merge(engine, memory):
    rng = random.Random(4)
    low = [rng.random() / 2 for _ in range(3000)]          # partitions of only self-keyed runs
    mixed = [rng.random() for _ in range(3000)]            # runs that switch to pairs
    cluster = Cluster(Properties({"executor.instances": 2, "executor.memory": memory}))
    try:
        worker = Worker(cluster, "python")
        ds = worker.parallelize(low + mixed, 4)
        assert ds.sortBy(_mixed_key, True, 3).collect() == sorted(low + mixed)
        assert ds.sortBy(_mixed_key, False, 3).collect() == sorted(low + mixed, reverse=True)
        assert ds.sortBy(lambda x: x, True, 3).collect() == sorted(low + mixed)
        if memory == "64KB":
            assert worker.metrics["spill_files"] > 0
    finally:
        cluster.stop()


CPP_BASIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cpp",
                         "build", "examples", "libbasic.so")


@pytest.mark.skipif(not os.path.exists(CPP_BASIC), reason="C++ executor not built")
@pytest.mark.parametrize("memory", ["1GB", "64KB"])
def test_cpp_self_keyed_and_pair_runs_merge(engine, memory):
    """C++: Identity keys give SELF_KEYED runs; FirstChar keys equal only one-character
    records, so some runs switch to pairs midway; ties keep their order (stable)."""
    rng = random.Random(8)
    words = ["".join(rng.choice("abcé漢") for _ in range(rng.choice([1, 1, 2, 5])))
             for _ in range(4000)]
    cluster = Cluster(Properties({"executor.instances": 2, "executor.memory": memory}))
    try:
        cpp = Worker(cluster, "cpp")
        ds = cpp.parallelize(words, 4)
        assert ds.sortBy(f"{CPP_BASIC}:Identity", True, 3).collect() == sorted(words)
        assert ds.sortBy(f"{CPP_BASIC}:Identity", False, 3).collect() == \
            sorted(words, reverse=True)
        assert ds.sortBy(f"{CPP_BASIC}:FirstChar", True, 3).collect() == \
            sorted(words, key=lambda w: w[0])
    finally:
        cluster.stop()
