"""Iterative jobs cost the same every iteration (issue 24), in local and cluster mode.

The loop is the one that regressed: ``nxt = cur.reduceByKey(min).union(cur).reduceByKey(min)
.cache(); nxt.count(); cur = nxt``. Its partitions used to double every iteration (a union sums
its parents' partitions and a shuffle took the larger count), so iteration k ran 2^k times the
tasks of the first. The guard counts, per iteration, the partitions, the tasks run and the
datasets the planner visited (``worker.metrics["lineage_visits"]``): each must be the same from
the second iteration to the twentieth, so the whole job is linear in its iterations. No clock is
read."""

import socket

import pytest

from spindle_engine import Cluster, Properties, Worker
from spindle_engine.rpc import tune_socket

from .conftest import Agent

ITERATIONS = 20
KEYS = 500


def _iterate_with_flat_costs(worker):
    """Run the loop, checking each result, and that every iteration after the first costs what
    the second did (checked as it goes: a doubling lineage fails at the third, not after 2^20)."""
    data = [(i % KEYS, i) for i in range(20000)]
    cur = worker.parallelize(data, 4).cache()
    assert cur.count() == len(data)
    costs = []
    for _ in range(ITERATIONS):
        tasks, visits = worker.metrics["tasks"], worker.metrics["lineage_visits"]
        nxt = cur.reduceByKey(min).union(cur).reduceByKey(min).cache()
        assert nxt.count() == KEYS
        costs.append((nxt.getNumPartitions(), worker.metrics["tasks"] - tasks,
                      worker.metrics["lineage_visits"] - visits))
        assert costs[-1] == costs[min(1, len(costs) - 1)], costs
        cur = nxt
    assert sorted(cur.collect()) == [(k, k) for k in range(KEYS)]  # the min of each key is itself
    partitions, tasks, visits = costs[-1]
    # the first map stage (cur, 8 partitions), the second (the union of its reduce with cur:
    # 16), the persist and the count (8 each)
    assert (partitions, tasks) == (8, 40), costs
    # every task's planning walks its lineage up to the first stored or shuffled dataset: a
    # constant per task, whatever the iteration
    assert visits <= 10 * tasks, costs


def test_an_iteration_costs_the_same_in_local_mode(python_worker):
    _iterate_with_flat_costs(python_worker)


@pytest.fixture
def secret_agents(tmp_path, monkeypatch):
    """Two agents (hosts) that authenticate every connection with a cluster secret, as on
    Spindle: the fetches between hosts pay the handshake, which once cost 40 ms each."""
    secret = "5e" * 32
    monkeypatch.setenv("SPINDLE_CLUSTER_SECRET", secret)
    started = [Agent(str(tmp_path), name, env={"SPINDLE_CLUSTER_SECRET": secret})
               for name in ("a", "b")]
    yield started
    for agent in started:
        agent.kill()


def test_an_iteration_costs_the_same_in_cluster_mode(engine, secret_agents):
    cluster = Cluster(Properties({"engine.mode": "cluster",
                                  "engine.agents": ",".join(a.address for a in secret_agents)}))
    try:
        _iterate_with_flat_costs(Worker(cluster, "python"))
    finally:
        cluster.stop()


def test_shuffles_keep_the_partition_count_of_a_key_partitioned_input(python_worker):
    """Spark's default partitioner, as a table: (dataset, its partitions, its partitioner)."""
    add = lambda a, b: a + b  # noqa: E731
    pairs = python_worker.parallelize([(i % 7, i) for i in range(100)], 4)
    reduced = pairs.reduceByKey(add)  # P(4)
    wide = pairs.reduceByKey(add, 6)  # P(6)
    # kept only when at least a tenth of the input's partitions: 2 is for 10 of them, not 40
    small = pairs.reduceByKey(add, 2)
    rows = [
        (pairs, 4, None),
        (reduced, 4, 4),
        (reduced.mapValues(str), 4, 4),  # keys kept
        (reduced.filter(lambda kv: kv[1] > 3), 4, 4),
        (reduced.map(lambda kv: kv), 4, None),  # keys may change
        (reduced.union(reduced), 8, 4),
        (reduced.union(pairs), 8, None),
        (reduced.union(wide), 10, None),
        (reduced.union(reduced).reduceByKey(add), 4, 4),  # the union's partitioning, not 8
        (reduced.union(pairs).reduceByKey(add), 8, 8),
        (reduced.union(reduced).reduceByKey(add, 3), 3, 3),  # a count asked for wins
        (pairs.join(reduced.union(reduced)), 4, 4),
        (wide.join(reduced), 6, 6),
        (reduced.union(reduced).distinct(), 4, None),  # whole records, not keys
        (reduced.union(reduced).repartition(5), 5, None),
        (reduced.union(reduced).sortByKey(), 4, None),  # range partitioned
        (python_worker.parallelize(range(40), 40).map(lambda x: (x, x)).join(small), 40, 40),
        (python_worker.parallelize(range(10), 10).map(lambda x: (x, x)).join(small), 2, 2),
    ]
    for i, (ds, nparts, partitioner) in enumerate(rows):
        assert (i, ds.getNumPartitions(), ds.partitioner) == (i, nparts, partitioner)
    assert sorted(reduced.union(reduced).reduceByKey(add).collect()) == \
        sorted((k, 2 * sum(v for kk, v in [(i % 7, i) for i in range(100)] if kk == k))
               for k in range(7))


def test_control_and_fetch_sockets_send_small_writes_at_once():
    """The handshake's proof and the request after it are two small writes; Nagle's algorithm
    would hold the second for the peer's delayed ACK (the 40 ms per fetch behind issue 24)."""
    with socket.socket() as s:
        tune_socket(s)
        assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        assert s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
