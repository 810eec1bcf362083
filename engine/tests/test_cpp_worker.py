"""The same operations on a C++ worker (functions from engine/cpp/examples), and word count
with a Python tokenizer and a C++ reducer (the seed's Figure 5) against pure Python."""

import collections
import json
import os
import random
import signal

import pytest

from spindle_engine import Cluster, EngineError, Properties, StorageLevel, Worker

CPP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "cpp", "build"))
LIB = os.path.join(CPP, "examples")

pytestmark = pytest.mark.skipif(not os.access(os.path.join(CPP, "spindle-cpp-executor"),
                                              os.X_OK), reason="C++ executor not built")


def basic(name):
    return os.path.join(LIB, f"libbasic.so:{name}")


def wordcount(name):
    return os.path.join(LIB, f"libwordcount.so:{name}")


@pytest.fixture(scope="module")
def cpp(engine):
    cluster = Cluster(Properties({"executor.instances": 2, "executor.cores": 2, "tag": "c++"}))
    yield Worker(cluster, "cpp")
    cluster.stop()


def _ints(n, seed):
    rng = random.Random(seed)
    return [rng.randint(-1000, 1000) for _ in range(n)]


def _words(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice("abcxyzéß漢字😀Ω") for _ in range(rng.randint(1, 6)))
            for _ in range(n)]


def _skewed(n, seed):
    rng = random.Random(seed)
    return [("hot" if rng.random() < 0.9 else f"k{rng.randint(0, 50)}é", rng.randint(0, 9))
            for _ in range(n)]


INTS = {"random": (_ints(2000, 1), 7), "sparse": (_ints(3, 2), 8), "empty": ([], 3)}


@pytest.fixture(params=sorted(INTS))
def ints(request, cpp):
    data, parts = INTS[request.param]
    return data, cpp.parallelize(data, parts)


def test_narrow_ops(ints):
    data, ds = ints
    assert ds.collect() == data
    assert ds.map(basic("AddOne")).collect() == [x + 1 for x in data]
    assert ds.filter(basic("Even")).collect() == [x for x in data if x % 2 == 0]
    assert ds.map(basic("AddOne")).filter(basic("Even")).map(basic("Identity")).collect() == \
        [x + 1 for x in data if (x + 1) % 2 == 0]
    counts = ds.mapPartitions(basic("CountPartition")).collect()
    assert sum(c for _, c in counts) == len(data)


def test_actions(ints):
    data, ds = ints
    assert ds.count() == len(data)
    assert ds.take(5) == data[:5]
    assert ds.top(4) == sorted(data, reverse=True)[:4]
    assert ds.top(3, key=basic("AddOne")) == sorted(data, reverse=True)[:3]
    assert ds.fold(0, basic("Sum")) == sum(data)
    assert ds.aggregate(0, basic("Sum"), basic("Sum")) == sum(data)
    if data:
        assert ds.reduce(basic("Sum")) == sum(data)
    sample = ds.takeSample(False, 20, seed=3)
    assert len(sample) == min(20, len(data)) and set(sample) <= set(data)


def test_sorts_and_distinct(ints):
    data, ds = ints
    assert ds.sort().collect() == sorted(data)
    assert ds.sort(ascending=False, numPartitions=3).collect() == sorted(data, reverse=True)
    assert sorted(ds.distinct(4).collect()) == sorted(set(data))
    assert sorted(ds.repartition(3).collect()) == sorted(data)
    assert ds.union(ds).collect() == data + data


def test_strings_unicode(cpp):
    words = _words(2000, 5)
    ds = cpp.parallelize(words, 5)
    assert ds.sort(numPartitions=3).collect() == sorted(words)
    by_first = ds.sortBy(basic("FirstChar"), numPartitions=4).collect()
    assert [w[0] for w in by_first] == sorted(w[0] for w in words)
    keyed = ds.keyBy(basic("FirstChar"))
    assert keyed.collect() == [(w[0], w) for w in words]
    assert keyed.keys().collect() == [w[0] for w in words]
    assert keyed.values().collect() == words
    groups = collections.defaultdict(list)
    for w in words:
        groups[w[0]].append(w)
    assert {k: sorted(v) for k, v in keyed.groupByKey(3).collect()} == \
        {k: sorted(v) for k, v in groups.items()}


def test_key_operations(cpp):
    data = _skewed(3000, 6)
    ds = cpp.parallelize(data, 5)
    sums = collections.Counter()
    for k, v in data:
        sums[k] += v
    assert dict(ds.reduceByKey(wordcount("Join")).collect()) == dict(sums)
    assert dict(ds.aggregateByKey(0, basic("Sum"), basic("Sum"), 3).collect()) == dict(sums)
    assert sorted(ds.mapValues(basic("AddOne")).collect()) == sorted((k, v + 1) for k, v in data)
    assert [k for k, _ in ds.sortByKey(False).collect()] == sorted((k for k, _ in data),
                                                                   reverse=True)
    other = cpp.parallelize([("hot", "H"), ("k1é", "one"), ("none", "x")], 2)
    expected = [(k, (v, w)) for k, v in data for k2, w in [("hot", "H"), ("k1é", "one")]
                if k == k2]
    assert sorted(ds.join(other, 4).collect()) == sorted(expected)


def test_text_file_and_outputs_match_python(cpp, python_worker, tmp_path):
    text = "".join(f"ligne {i} é漢😀\r\n" if i % 3 else f"line {i}\n" for i in range(300))
    path = tmp_path / "in.txt"
    path.write_bytes(text.encode())
    assert cpp.textFile(str(path), 7).collect() == text.splitlines()
    data = ["plain", "ünï", 7, 1.0, 0.1, 1e20, (1, "a"), {"k": b"\x01"}, {2: None}, None, True]
    for worker, name in ((cpp, "cpp"), (python_worker, "py")):
        ds = worker.parallelize(data, 3)
        ds.saveAsTextFile(tmp_path / f"text-{name}")
        ds.saveAsJsonFile(tmp_path / f"json-{name}")
    for kind in ("text", "json"):
        files = sorted(os.listdir(tmp_path / f"{kind}-py"))
        assert files == sorted(os.listdir(tmp_path / f"{kind}-cpp"))
        for f in files:
            assert (tmp_path / f"{kind}-cpp" / f).read_bytes() == \
                (tmp_path / f"{kind}-py" / f).read_bytes()
    lines = (tmp_path / "json-cpp" / "part-00000").read_text().splitlines()
    assert [json.loads(x) for x in lines][:2] == ["plain", "ünï"]


def test_persist(cpp):
    ds = cpp.parallelize(list(range(500)), 4).map(basic("AddOne")).cache()
    assert ds.count() == 500
    assert sum(ds.collect()) == sum(range(1, 501))
    disk = ds.persist(StorageLevel.DISK_ONLY)
    assert disk.count() == 500
    ds.unpersist()
    assert ds.count() == 500


def test_context_properties(cpp):
    assert set(cpp.parallelize([1, 2, 3], 2).map(basic("Tag")).keys().collect()) == {"c++"}


def test_word_count_python_tokenizer_cpp_reducer(cpp, python_worker, fn, tmp_path):
    rng = random.Random(11)
    vocab = ["spindle", "ignis", "thrift", "données", "数据", "😀", "a", "the"]
    text = "".join(" ".join(rng.choice(vocab) for _ in range(rng.randint(0, 12))) + "\n"
                   for _ in range(3000))
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    words = python_worker.textFile(str(path), 5).flatMap(fn("wordcount.py:Split"))
    counts = cpp.importData(words).reduceByKey(wordcount("Join"))
    assert dict(counts.collect()) == dict(collections.Counter(text.split()))
    back = python_worker.importData(counts).map(lambda kv: kv[1]).reduce(lambda a, b: a + b)
    assert back == len(text.split())


def test_cpp_errors_and_recovery(cpp):
    ds = cpp.parallelize(list(range(10)), 2)
    with pytest.raises(EngineError) as err:
        ds.map(basic("NoSuchThing")).collect()
    assert err.value.kind == "FUNCTION_NOT_FOUND" and "NoSuchThing" in str(err.value)
    with pytest.raises(EngineError) as err:
        ds.map(basic("Fail")).collect()
    assert err.value.kind == "FUNCTION_FAILED" and err.value.function == basic("Fail")
    assert f"partition {err.value.partition}" in str(err.value)
    os.kill(cpp.executor_pids()[0], signal.SIGKILL)
    assert ds.map(basic("AddOne")).collect() == list(range(1, 11))
    assert cpp.metrics["executors_lost"] >= 1


def test_cpp_spills_over_memory(engine):
    cluster = Cluster(Properties({"executor.instances": 1, "executor.cores": 2,
                                  "executor.memory": "32KB"}))
    try:
        cpp = Worker(cluster, "cpp")
        data = _skewed(20_000, 7) + [(f"u{i}", i) for i in range(5000)]
        sums = collections.Counter()
        for k, v in data:
            sums[k] += v
        ds = cpp.parallelize(data, 4)
        assert dict(ds.reduceByKey(wordcount("Join"), 3).collect()) == dict(sums)
        assert ds.sortByKey(numPartitions=3).keys().collect() == sorted(k for k, _ in data)
        assert cpp.metrics["spill_files"] > 0
    finally:
        cluster.stop()
