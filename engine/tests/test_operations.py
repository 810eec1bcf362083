"""Every dataset operation on a Python worker against a plain-Python reference."""

import collections
import os
import random

import pytest

ALPHABET = "abcxyzéß漢字😀Ω \t"


def _ints(n, seed):
    rng = random.Random(seed)
    return [rng.randint(-1000, 1000) for _ in range(n)]


def _skewed_pairs(n, seed):
    rng = random.Random(seed)
    return [("hot" if rng.random() < 0.9 else f"k{rng.randint(0, 50)}", rng.randint(0, 9))
            for _ in range(n)]


def _words(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8))) for _ in range(n)]


INT_CASES = {  # name -> (data, partitions): includes empty partitions and an empty dataset
    "random": (_ints(2000, 1), 7),
    "few_in_many_partitions": (_ints(3, 2), 8),
    "empty": ([], 3),
}
PAIR_CASES = {
    "skewed": (_skewed_pairs(3000, 3), 5),
    "unicode_keys": ([(w, i) for i, w in enumerate(_words(1500, 4))], 4),
    "empty": ([], 2),
}


@pytest.fixture(params=sorted(INT_CASES))
def ints(request, python_worker):
    data, parts = INT_CASES[request.param]
    return data, python_worker.parallelize(data, parts)


@pytest.fixture(params=sorted(PAIR_CASES))
def pairs(request, python_worker):
    data, parts = PAIR_CASES[request.param]
    return data, python_worker.parallelize(data, parts)


def test_parallelize_collect_keeps_order(ints):
    data, ds = ints
    assert ds.collect() == data


def test_narrow_ops_by_reference(ints, fn):
    data, ds = ints
    assert ds.map(fn("ops.py:AddOne")).collect() == [x + 1 for x in data]
    assert ds.filter(fn("ops.py:IsEven")).collect() == [x for x in data if x % 2 == 0]
    assert ds.flatMap(fn("ops.py:Digits")).collect() == \
        [int(c) for x in data for c in str(abs(x))]
    assert ds.keyBy(fn("ops.py:Mod10")).collect() == [(x % 10, x) for x in data]
    assert sum(ds.mapPartitions(fn("ops.py:SumPartition")).collect()) == sum(data)


def test_narrow_ops_by_lambda(ints):
    data, ds = ints
    fused = ds.map(lambda x: x * 3).filter(lambda x: x % 2).flatMap(lambda x: [x, -x])
    assert fused.collect() == [y for x in data if (x * 3) % 2 for y in (x * 3, -x * 3)]


def test_narrow_chain_runs_as_one_stage(python_worker):
    ds = python_worker.parallelize(range(100), 4)
    before = python_worker.metrics["tasks"]
    ds.map(lambda x: x + 1).filter(lambda x: x % 2).map(str).collect()
    assert python_worker.metrics["tasks"] - before == 4


def test_pair_narrow_ops(pairs, fn):
    data, ds = pairs
    assert ds.keys().collect() == [k for k, _ in data]
    assert ds.values().collect() == [v for _, v in data]
    assert ds.mapValues(fn("ops.py:AddOne")).collect() == [(k, v + 1) for k, v in data]


def test_actions_on_ints(ints, fn):
    data, ds = ints
    assert ds.count() == len(data)
    assert ds.take(5) == data[:5]
    assert ds.take(10_000) == data
    assert ds.top(4) == sorted(data, reverse=True)[:4]
    assert ds.top(3, key=fn("ops.py:Negate")) == sorted(data)[:3]
    assert ds.fold(0, fn("ops.py:Add")) == sum(data)
    assert ds.aggregate((0, 0), lambda acc, x: (acc[0] + x, acc[1] + 1),
                        lambda a, b: (a[0] + b[0], a[1] + b[1])) == (sum(data), len(data))
    if data:
        assert ds.reduce(fn("ops.py:Add")) == sum(data)
        assert ds.reduce(max) == max(data)
    else:
        with pytest.raises(ValueError):
            ds.reduce(fn("ops.py:Add"))


def test_take_sample(ints):
    data, ds = ints
    sample = ds.takeSample(False, 50, seed=7)
    assert len(sample) == min(50, len(data))
    assert not collections.Counter(sample) - collections.Counter(data)
    assert ds.takeSample(False, 50, seed=7) == sample  # same seed, same sample
    with_replacement = ds.takeSample(True, 30, seed=1)
    assert len(with_replacement) == (30 if data else 0)
    assert set(with_replacement) <= set(data)


def test_sorts(ints):
    data, ds = ints
    assert ds.sort().collect() == sorted(data)
    assert ds.sort(ascending=False, numPartitions=3).collect() == sorted(data, reverse=True)
    by_abs = ds.sortBy(lambda x: abs(x), numPartitions=4).collect()
    assert [abs(x) for x in by_abs] == sorted(abs(x) for x in data)
    assert sorted(by_abs) == sorted(data)


def test_sort_unicode_strings(python_worker):
    words = _words(3000, 9)
    ds = python_worker.parallelize(words, 6)
    assert ds.sort(numPartitions=4).collect() == sorted(words)
    assert ds.sortBy(len, ascending=False).map(len).collect() == \
        sorted(map(len, words), reverse=True)


def test_sort_by_key(pairs):
    data, ds = pairs
    got = ds.sortByKey(numPartitions=3).collect()
    assert [k for k, _ in got] == sorted(k for k, _ in data)
    assert sorted(got) == sorted(data)
    desc = ds.sortByKey(ascending=False).keys().collect()
    assert desc == sorted((k for k, _ in data), reverse=True)


def _by_key(data):
    out = collections.defaultdict(list)
    for k, v in data:
        out[k].append(v)
    return out


def test_key_aggregations(pairs, fn):
    data, ds = pairs
    groups = _by_key(data)
    assert sorted(ds.reduceByKey(fn("ops.py:Add")).collect()) == \
        sorted((k, sum(v)) for k, v in groups.items())
    assert sorted(ds.reduceByKey(lambda a, b: a + b, numPartitions=7).collect()) == \
        sorted((k, sum(v)) for k, v in groups.items())
    got = ds.aggregateByKey([], lambda acc, v: acc + [v], lambda a, b: a + b, 3).collect()
    assert sorted((k, sorted(v)) for k, v in got) == \
        sorted((k, sorted(v)) for k, v in groups.items())
    grouped = ds.groupByKey(4).collect()
    assert sorted((k, sorted(v)) for k, v in grouped) == \
        sorted((k, sorted(v)) for k, v in groups.items())


def test_distinct_union_repartition(pairs):
    data, ds = pairs
    assert sorted(ds.distinct().collect()) == sorted(set(data))
    assert sorted(ds.keys().distinct(3).collect()) == sorted({k for k, _ in data})
    both = ds.union(ds.mapValues(lambda v: -v))
    assert both.getNumPartitions() == 2 * ds.getNumPartitions()
    assert both.collect() == data + [(k, -v) for k, v in data]
    re = ds.repartition(3)
    assert re.getNumPartitions() == 3
    assert sorted(re.collect()) == sorted(data)


def test_join(pairs, python_worker):
    data, ds = pairs
    other_data = [(k, k * 2) for k in {k for k, _ in data[:40]}] + [("absent", 1)]
    other = python_worker.parallelize(other_data, 3)
    expected = [(k, (v, w)) for k, v in data for k2, w in other_data if k == k2]
    assert sorted(ds.join(other, 4).collect()) == sorted(expected)


def test_values_of_every_type_round_trip(python_worker):
    data = [None, True, False, 0, -2**63, 2**63 - 1, 1.5, float("inf"), "", "日本語😀",
            b"\x00\xff", (1, "a"), [1, [2, (3, None)]], {"k": [1.0]}, {1: "one"}]
    assert python_worker.parallelize(data, 4).map(lambda x: x).collect() == data


def test_context_hooks_and_properties(python_worker, fn):
    ds = python_worker.parallelize(range(10), 3)
    tagged = ds.map(fn("ops.py:PartitionTagger")).collect()
    assert sorted({p for p, _ in tagged}) == [0, 1, 2]
    assert [x for _, x in tagged] == list(range(10))
    assert ds.map(fn("ops.py:Property")).keys().distinct().collect() == ["spindle"]


def test_persist_and_unpersist(python_worker):
    from spindle_engine import StorageLevel
    ds = python_worker.parallelize(range(1000), 4).map(lambda x: x * x).cache()
    assert ds.count() == 1000
    before = python_worker.metrics["tasks"]
    assert ds.collect() == [x * x for x in range(1000)]
    assert python_worker.metrics["tasks"] - before == 4  # read from the cache, no recompute
    on_disk = ds.map(lambda x: -x).persist(StorageLevel.DISK_ONLY)
    assert on_disk.count() == 1000 and sum(on_disk.collect()) == -sum(x * x for x in range(1000))
    ds.unpersist()
    on_disk.unpersist()
    assert ds.count() == 1000


@pytest.mark.parametrize("given, expected", [
    ("/job/output/x", "/job/output/x"),
    ("file:///job/output/x", "/job/output/x"),
    ("output/x", "/job/output/x"),
    ("file://output/x", "/job/output/x"),
    ("./output/../output/x/", "/job/output/x"),
])
def test_save_paths_are_driver_paths(given, expected, monkeypatch):
    from spindle_engine.dataset import local_path
    monkeypatch.setattr(os, "getcwd", lambda: "/job")
    assert local_path(given) == expected


def test_local_saves_take_relative_and_file_paths(python_worker, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    python_worker.parallelize(["a", "b", "c"], 2).saveAsTextFile("out/rel")
    python_worker.parallelize([1], 1).saveAsJsonFile(f"file://{tmp_path}/out/abs")
    assert [(tmp_path / "out" / "rel" / n).read_text() for n in ("part-00000", "part-00001")] \
        == ["a\n", "b\nc\n"]
    assert (tmp_path / "out" / "abs" / "part-00000").read_text() == "1\n"


def test_text_and_json_output(python_worker, tmp_path):
    import json
    data = ["plain", "ünï", 7, 1.0, (1, "a"), {"k": b"\x01"}, {2: None}]
    ds = python_worker.parallelize(data, 3)
    ds.saveAsTextFile(tmp_path / "text")
    lines = []
    for name in sorted(p.name for p in (tmp_path / "text").iterdir()):
        lines += (tmp_path / "text" / name).read_text("utf-8").splitlines()
    assert lines == ["plain", "ünï", "7", "1.0", '[1,"a"]', '{"k":"AQ=="}', "[[2,null]]"]
    ds.saveAsJsonFile(tmp_path / "json")
    values = []
    for name in sorted(p.name for p in (tmp_path / "json").iterdir()):
        values += [json.loads(x) for x in (tmp_path / "json" / name).read_text().splitlines()]
    assert values[:2] == ["plain", "ünï"]
    with pytest.raises(FileExistsError):
        ds.saveAsTextFile(tmp_path / "text")
