"""Cluster mode on this machine: two engine agents, each a separate 'host' with its own work dirs
and file server, so every partition crossing between them goes over TCP (rpc/FETCH.md).
Covers results, striping over the work dirs, storage levels, and losing a host mid-job."""

import os
import random
import re
import signal
import threading
import time
from collections import Counter

import pytest

from spindle_engine import Cluster, Properties, StorageLevel, Worker
from spindle_engine.backend.plan import Sink, SinkKind, run_on_records
from spindle_engine.codec import decode

from .conftest import TESTS, Agent


@pytest.fixture
def agents(tmp_path):
    started = [Agent(str(tmp_path), "a"), Agent(str(tmp_path), "b")]
    yield started
    for a in started:
        if a.proc.poll() is None:
            a.kill()


def _cluster(engine, agents, **props):
    return Cluster(Properties({"engine.mode": "cluster",
                               "engine.agents": ",".join(a.address for a in agents),
                               "task.max_failures": 4, **props}))


def _text(tmp_path, lines=3000, seed=3):
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "délta", "ε", "zeta", "eta", "theta"]
    text = "\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(0, 9)))
                     for _ in range(lines)) + "\n"
    path = tmp_path / "input.txt"
    path.write_text(text, encoding="utf-8")
    return str(path), text


def test_word_count_crosses_hosts_and_stripes_over_disks(engine, agents, tmp_path, fn):
    path, text = _text(tmp_path)
    met = tmp_path / "rendezvous"
    met.mkdir()
    cluster = _cluster(engine, agents, **{"test.rendezvous": str(met), "test.rendezvous_n": 2})
    try:
        python = Worker(cluster, "python")
        assert sorted(ex.host for ex in python.executors) == ["127.0.0.1", "127.0.0.1"]
        # every map task starts only once both hosts run one, so both hosts write map outputs
        words = python.textFile(path, 6).flatMap(fn("wordcount.py:Split")).map(fn("ops.py:Rendezvous"))
        counts = dict(words.reduceByKey(fn("wordcount.py:Join"), 4).collect())
        assert counts == Counter(text.split())
        assert len(os.listdir(met)) == 2
        served = [agent.stats() for agent in cluster.agents]
        assert all(s["files_served"] > 0 and s["bytes_served"] > 0 for s in served), served
        outputs = [{re.search(r"/(p\d+-m\d+-a\d+)-[^/]*\.bin$", p)[1]: p.split("/spindle-engine/")[0]
                    for p in agent.files("w*/shuffle*/*.bin")} for agent in agents]
        assert min(len(o) for o in outputs) > 0 and sum(len(o) for o in outputs) == 6
        for agent, kept in zip(agents, outputs, strict=True):  # one per map task, round the host's disks
            used = set(kept.values())  # (6 on 2 hosts: one has 3 or more, so uses both disks)
            assert len(used) == min(len(kept), len(agent.disks)) and used <= set(agent.disks)
    finally:
        cluster.stop()
    for agent in agents:  # the session's files went with the driver's connection
        assert agent.files("*") == [] or _eventually(lambda a=agent: a.files("*") == [])


def _eventually(check, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_operations_match_local_results(engine, agents):
    rng = random.Random(5)
    data = [(rng.randint(0, 50), rng.random()) for _ in range(5000)]
    other = [(k, f"v{k}") for k in range(0, 60, 3)]
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        ds = python.parallelize(data, 5)
        assert ds.sortByKey().collect() == sorted(data, key=lambda kv: kv[0])
        assert sorted(ds.groupByKey().mapValues(len).collect()) == \
            sorted(Counter(k for k, _ in data).items())
        joined = ds.join(python.parallelize(other, 2)).collect()
        assert sorted(joined) == sorted((k, (v, w)) for k, v in data for k2, w in other
                                        if k == k2)
        assert ds.keys().distinct().count() == len({k for k, _ in data})
        assert ds.values().reduce(lambda a, b: a + b) == pytest.approx(sum(v for _, v in data))
    finally:
        cluster.stop()


@pytest.mark.parametrize("level", [StorageLevel.MEMORY_ONLY, StorageLevel.RAW_MEMORY,
                                   StorageLevel.DISK_ONLY])
def test_storage_levels_in_cluster_mode(engine, agents, level):
    data = [f"record {i} " + "x" * (i % 40) for i in range(4000)]
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        ds = python.parallelize(data, 4).map(str.upper).persist(level)
        assert ds.count() == len(data)
        tasks = python.metrics["tasks"]
        assert sorted(ds.collect()) == sorted(x.upper() for x in data)
        assert python.metrics["tasks"] - tasks == 4  # read from storage, not recomputed
        if level == StorageLevel.DISK_ONLY:
            assert any(a.files("w*/storage-disk/*.bin") for a in agents)
    finally:
        cluster.stop()


def test_losing_a_host_recomputes_only_what_it_held(engine, agents, tmp_path, fn):
    """Kill one host while a shuffle reads the other's outputs: the lost map outputs and cached
    partitions are recomputed on the survivor; the result is exact."""
    path, text = _text(tmp_path, lines=4000, seed=9)
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        words = python.textFile(path, 4).flatMap(fn("wordcount.py:Split")).cache()
        assert words.count() == len(text.split())
        counts = words.reduceByKey(fn("wordcount.py:Join"), 4)
        slow = counts.map(_slow_identity)  # time to kill a host mid-stage
        agents[0].proc.send_signal(signal.SIGKILL)
        result = dict(slow.collect())
        assert result == Counter(text.split())
        assert python.metrics["executors_lost"] + python.metrics["hosts_lost"] >= 1
        # the dead host's executor is down; the survivor did the work
        assert [ex.down for ex in python.executors].count(True) == 1
    finally:
        cluster.stop()


def _add(a, b):
    return a + b


def test_losing_a_host_after_a_shuffle_refetches_only_its_map_outputs(engine, agents, tmp_path,
                                                                     fn):
    path, text = _text(tmp_path, lines=4000, seed=11)
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        counts = python.textFile(path, 4).flatMap(fn("wordcount.py:Split")) \
            .reduceByKey(fn("wordcount.py:Join"), 4)
        assert dict(counts.collect()) == Counter(text.split())
        dead = cluster.agents[0].info.file_server
        lost = [q for q, (where, _) in counts.shuffle.outputs[0].items() if where == dead]
        tasks = python.metrics["tasks"]
        agents[0].kill()  # its map outputs are gone with it
        assert dict(counts.collect()) == Counter(text.split())
        # the loss is noticed by whichever comes first: a survivor's fetch from the dead host
        # failing, or a task sent to the dead host's executor finding its agent gone
        assert python.metrics["hosts_lost"] >= 1, python.metrics
        assert python.metrics["fetch_failures"] + python.metrics["executors_lost"] >= 1, python.metrics
        # recomputed: only the lost map partitions, then the 4 reduce tasks (some of which may
        # have run once before the fetch failure was seen)
        assert lost and len(lost) + 4 <= python.metrics["tasks"] - tasks <= len(lost) + 4 + 3
    finally:
        cluster.stop()


def test_a_result_whose_host_died_before_the_driver_fetched_it_is_computed_again(engine, agents):
    """An executor ran its task just before its host died: the driver cannot fetch the result,
    so that partition runs again on the host left (seen under load in the test above)."""
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        read = python.read_output
        killed = []

        def host_dies_first(executor, path):
            if not killed:
                [victim] = [i for i, a in enumerate(cluster.agents)
                            if a.info.file_server == executor.file_server]
                agents[victim].kill()
                killed.append(victim)
            return read(executor, path)

        python.read_output = host_dies_first
        assert python.parallelize(range(1000), 4).map(lambda x: x + 1).collect() == \
            list(range(1, 1001))
        assert killed and python.metrics["fetch_failures"] >= 1, python.metrics
    finally:
        cluster.stop()


def _slow_identity(x):
    time.sleep(0.01)
    return x


def test_a_replacement_host_at_the_same_address_rejoins(engine, agents, tmp_path):
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        assert python.parallelize(range(100), 4).reduce(_add) == 4950
        port = agents[0].port
        agents[0].kill()
        assert python.parallelize(range(100), 4).map(lambda x: x * 2).reduce(_add) == 9900
        agents[0] = Agent(str(tmp_path), "a", port)  # Spindle replaces the member, same IP
        assert _eventually(lambda: not any(ex.down for ex in python.executors))
        assert python.parallelize(range(10), 2).collect() == list(range(10))
    finally:
        cluster.stop()


class _WaitsFor:
    """A slot that looks for a task only once `event` is set."""

    def __init__(self, slot, event):
        self._slot, self._event = slot, event

    @property
    def executor(self):
        self._event.wait(30)
        return self._slot.executor

    def __getattr__(self, name):
        return getattr(self._slot, name)


class _Sets(_WaitsFor):
    """A slot that sets `event` once it tried to reach its executor."""

    @property
    def executor(self):
        return self._slot.executor

    def connect(self, properties):
        try:
            return self._slot.connect(properties)
        finally:
            self._event.set()


def test_a_final_reduce_taken_by_an_executor_whose_host_just_died_runs_on_the_survivor(
        engine, agents, monkeypatch):
    """reduce()'s last task reads the driver's own file, so nothing of it is lost with a host:
    when the executor that takes it is on a host that died unseen (no task of the stage before
    went there), it runs again on another (seen in CI: OutputsLost escaped reduce())."""
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        assert python.parallelize(range(100), 4).reduce(_add) == 4950
        executors = agents[0].executor_pids()
        agents[0].kill()
        # its executor ends at its stdin's EOF, a moment later: until then it could still run it
        assert executors and _eventually(lambda: not any(os.path.exists(f"/proc/{pid}")
                                                         for pid in executors), 30)
        tried = threading.Event()
        dead = agents[0].address
        monkeypatch.setattr(python, "slots", [
            _Sets(s, tried) if s.executor.agent.address == dead else _WaitsFor(s, tried)
            for s in python.slots])
        result = run_on_records(python, [1, 2, 3],
                                Sink(kind=SinkKind.REDUCE, fn=python.function(_add)), "final")
        assert decode(result.value) == [6]
        assert tried.is_set() and python.metrics["hosts_lost"] == 1
        assert [ex.down for ex in python.executors if ex.agent.address == dead] == [True]
    finally:
        cluster.stop()


def test_cached_partitions_spread_again_once_a_host_is_back(engine, agents, tmp_path):
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        ds = python.parallelize(range(1000), 8).map(lambda x: x + 1).cache()
        assert ds.count() == 1000
        assert sorted(len(ps) for ps in ds.storage._held().values()) == [4, 4]
        port = agents[0].port
        agents[0].kill()
        assert ds.reduce(_add) == 500500  # all 8 partitions now on the survivor
        agents[0] = Agent(str(tmp_path), "a", port)
        assert _eventually(lambda: not any(ex.down for ex in python.executors))
        assert ds.reduce(_add) == 500500  # the survivor gives up its excess, recomputed there
        assert sorted(len(ps) for ps in ds.storage._held().values()) == [4, 4]
    finally:
        cluster.stop()


def test_a_killed_executor_process_is_restarted_by_its_agent(engine, agents):
    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        assert python.parallelize(range(100), 4).reduce(_add) == 4950
        children = agents[0].executor_pids()
        assert len(children) == 1  # its one Python executor (--cores 1)
        os.kill(int(children[0]), signal.SIGKILL)
        assert python.parallelize(range(100), 4).map(lambda x: x * 3).reduce(_add) == 14850
        assert python.metrics["executors_lost"] >= 1
        assert not any(ex.down for ex in python.executors)  # its host is fine: started again
    finally:
        cluster.stop()


def test_cluster_mode_needs_agents(engine):
    from spindle_engine import EngineError
    with pytest.raises(EngineError, match="engine.agents"):
        Cluster(Properties({"engine.mode": "cluster", "engine.agents": ""}))
    with pytest.raises(EngineError, match="unreachable"):
        Cluster(Properties({"engine.mode": "cluster", "engine.agents": "127.0.0.1:1"}))


CPP_EXAMPLES = os.path.join(os.path.dirname(TESTS), "cpp", "build", "examples")


@pytest.mark.skipif(not os.path.exists(os.path.join(CPP_EXAMPLES, "libwordcount.so")),
                    reason="C++ executor not built (engine/build.sh)")
def test_figure5_word_count_across_hosts_with_a_cpp_reducer(engine, agents, tmp_path, fn):
    """Python tokenizer on both hosts → importData → C++ reducer on both hosts; the C++
    executors fetch their inputs and the .so from other hosts, and RAW_MEMORY works there too."""
    path, text = _text(tmp_path, lines=5000, seed=21)
    cluster = _cluster(engine, agents)
    try:
        python, cpp = Worker(cluster, "python"), Worker(cluster, "cpp")
        pairs = python.textFile(path, 4).flatMap(fn("wordcount.py:Split"))
        imported = cpp.importData(pairs).persist(StorageLevel.RAW_MEMORY)
        join = os.path.join(CPP_EXAMPLES, "libwordcount.so") + ":Join"
        assert dict(imported.reduceByKey(join, 4).collect()) == Counter(text.split())
        assert imported.count() == len(text.split())
        assert all(s["files_served"] > 0 for s in (a.stats() for a in cluster.agents))
    finally:
        cluster.stop()


def _parts(directory):
    """The part files of a save directory, in order, as lists of lines."""
    names = sorted(os.listdir(directory))
    assert names == [f"part-{i:05d}" for i in range(len(names))], names
    with_lines = []
    for name in names:
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            with_lines.append(f.read().splitlines())
    return with_lines


def test_saves_in_cluster_mode_land_on_the_driver(engine, agents, tmp_path, fn, monkeypatch):
    """saveAsTextFile / saveAsJsonFile to a local path: the executors write their part files in
    their hosts' work dirs and the driver streams them from the hosts' file servers into the
    path (absolute, file:// or relative to the driver's working directory)."""
    import json

    path, text = _text(tmp_path, lines=3000, seed=17)
    expected = Counter(text.split())
    met = tmp_path / "rendezvous"
    met.mkdir()
    cluster = _cluster(engine, agents, **{"test.rendezvous": str(met), "test.rendezvous_n": 2})
    try:
        python = Worker(cluster, "python")
        # the save's tasks start only once both hosts run one, so both hosts write parts (on 2 busy
        # cores one slot's thread once took all three before the other host's ran)
        counts = python.textFile(path, 4).flatMap(fn("wordcount.py:Split")) \
            .reduceByKey(fn("wordcount.py:Join"), 3).map(fn("ops.py:Rendezvous"))
        served = sum(s["bytes_served"] for s in (a.stats() for a in cluster.agents))
        counts.saveAsTextFile(str(tmp_path / "out" / "counts"))
        parts = _parts(tmp_path / "out" / "counts")
        assert len(parts) == 3
        assert dict(tuple(json.loads(line)) for part in parts for line in part) == expected
        # written on the hosts (both of them), then fetched through their file servers
        on_hosts = [p for a in agents for p in a.files("w*/save*/part-*")]
        assert {p.split("/spindle-engine/")[0].rsplit("/", 1)[0] for p in on_hosts} == \
            {os.path.dirname(a.disks[0]) for a in agents}
        host_lines = []
        for p in on_hosts:
            with open(p, encoding="utf-8") as f:
                host_lines += f.read().splitlines()
        assert sorted(host_lines) == sorted(line for part in parts for line in part)
        assert sum(s["bytes_served"] for s in (a.stats() for a in cluster.agents)) - served >= \
            sum(os.path.getsize(p) for p in on_hosts)

        counts.saveAsJsonFile("file://" + str(tmp_path / "json"))
        assert dict(tuple(json.loads(line)) for part in _parts(tmp_path / "json")
                    for line in part) == expected
        monkeypatch.chdir(tmp_path)
        python.parallelize(["é", 1, (2, "b")], 2).saveAsTextFile("rel/out")
        assert _parts(tmp_path / "rel" / "out") == [["é"], ["1", '[2,"b"]']]
        python.parallelize([], 2).saveAsTextFile("empty")
        assert _parts(tmp_path / "empty") == [[], []]
        with pytest.raises(FileExistsError):
            counts.saveAsTextFile("rel/out")
    finally:
        cluster.stop()


def _slow_part(x):
    time.sleep(0.02)
    return x


def test_a_save_whose_host_dies_before_the_fetch_writes_its_parts_again(engine, agents,
                                                                        tmp_path):
    """A host dies after some of its part files were written: those parts cannot be fetched
    (FETCH_FAILED), so they are written again on the survivor; the saved lines are exact."""
    import threading

    cluster = _cluster(engine, agents)
    try:
        python = Worker(cluster, "python")
        data = [f"line {i}" for i in range(8 * 25)]
        ds = python.parallelize(data, 8).map(_slow_part)  # ≈0.5 s per partition

        def kill_after_two_parts():
            if _eventually(lambda: len(agents[0].files("w*/save*/part-*")) >= 2, 60):
                agents[0].kill()  # one finished part there at least (one task at a time)

        killer = threading.Thread(target=kill_after_two_parts)
        killer.start()
        ds.saveAsTextFile(str(tmp_path / "saved"))
        killer.join()
        assert agents[0].proc.poll() is not None
        assert [line for part in _parts(tmp_path / "saved") for line in part] == data
        assert python.metrics["fetch_failures"] >= 1
    finally:
        cluster.stop()


@pytest.mark.skipif(not os.path.exists(os.path.join(CPP_EXAMPLES, "libwordcount.so")),
                    reason="C++ executor not built (engine/build.sh)")
def test_a_cpp_worker_saves_to_the_driver_too(engine, agents, tmp_path, fn):
    import json

    path, text = _text(tmp_path, lines=2000, seed=23)
    cluster = _cluster(engine, agents)
    try:
        python, cpp = Worker(cluster, "python"), Worker(cluster, "cpp")
        pairs = cpp.importData(python.textFile(path, 4).flatMap(fn("wordcount.py:Split")))
        join = os.path.join(CPP_EXAMPLES, "libwordcount.so") + ":Join"
        pairs.reduceByKey(join, 4).saveAsJsonFile(str(tmp_path / "counts"))
        parts = _parts(tmp_path / "counts")
        assert len(parts) == 4
        assert dict(tuple(json.loads(line)) for part in parts for line in part) == \
            Counter(text.split())
        assert [p for a in agents for p in a.files("w*-cpp/save*/part-*")]
    finally:
        cluster.stop()
