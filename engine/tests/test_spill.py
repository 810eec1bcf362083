"""Shuffles larger than the executors' memory spill runs to the scratch dirs, results unchanged."""

import collections
import os
import random

import pytest

from spindle_engine import Cluster, Properties, Worker


@pytest.fixture(scope="module")
def small(engine, tmp_path_factory):
    scratch = [str(tmp_path_factory.mktemp("scratch-a")), str(tmp_path_factory.mktemp("scratch-b"))]
    cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": 2,
                                  "executor.memory": "64KB",
                                  "engine.scratch_dirs": ",".join(scratch)}))
    yield cluster, Worker(cluster, "python")
    cluster.stop()


def _spill_files(cluster):
    return [f for d in cluster.scratch_dirs for f in os.listdir(d) if f.startswith("spill-")]


def _pairs(n, keys, seed):
    rng = random.Random(seed)
    return [(f"key-{rng.randint(0, keys)}-ü", rng.randint(0, 100)) for _ in range(n)]


def test_spilling_shuffles_match_reference(small):
    cluster, worker = small
    data = _pairs(40_000, 6_000, 1)  # about 1 MB encoded, 16x the memory
    ds = worker.parallelize(data, 4)
    before = worker.metrics["spill_files"]

    sums = collections.Counter()
    groups = collections.defaultdict(list)
    for k, v in data:
        sums[k] += v
        groups[k].append(v)
    assert dict(ds.reduceByKey(lambda a, b: a + b, 3).collect()) == dict(sums)
    assert {k: sorted(v) for k, v in ds.groupByKey(3).collect()} == \
        {k: sorted(v) for k, v in groups.items()}
    assert sorted(ds.keys().distinct(2).collect()) == sorted(groups)
    assert ds.sortByKey(numPartitions=3).keys().collect() == sorted(k for k, _ in data)
    assert ds.values().sort(ascending=False).collect() == sorted((v for _, v in data),
                                                                  reverse=True)
    assert sorted(ds.repartition(5).collect()) == sorted(data)

    assert worker.metrics["spill_files"] - before > 0
    assert worker.metrics["spill_bytes"] > 64 * 1024
    spilled = _spill_files(cluster)
    assert spilled, "spill runs were written to the scratch dirs"
    assert {os.path.dirname(os.path.join(d, f)) for d in cluster.scratch_dirs
            for f in os.listdir(d) if f.startswith("spill-")} == set(cluster.scratch_dirs)


def test_scratch_dirs_removed_at_stop(engine, tmp_path):
    cluster = Cluster(Properties({"executor.memory": "16KB",
                                  "engine.scratch_dirs": str(tmp_path)}))
    worker = Worker(cluster, "python")
    data = _pairs(5_000, 2_000, 2)
    assert len(worker.parallelize(data, 2).groupByKey().collect()) == len(dict(data))
    assert _spill_files(cluster)
    cluster.stop()
    assert os.listdir(tmp_path) == []
