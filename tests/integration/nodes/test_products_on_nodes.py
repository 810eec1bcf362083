"""Spark and the engine on three simulated nodes (deploy/node): Spark with a worker on each node counts
words exactly, its driver a Mesos task on a node; an engine cluster with an executor on each node runs
the Figure-5 word count and K-Means exactly, partitions crossing nodes over TCP.

Marked slow (the Spark and engine images are pulled onto each of the three nodes, then the clusters
and jobs run on 2 shared cores); tests/integration/nodes/test_simulated_nodes.py runs the nodes
with static-web."""
from collections import Counter
from collections.abc import Iterator

import pytest

from tests.integration.platform.cluster_checks import wait_settled
from tests.support.jobs import (
    CPP_WORDCOUNT,
    JOBS,
    assert_same_centroids,
    expected_counts,
    reference_centroids,
    result_of,
    wait_job,
)
from tests.support.live_users import live_user
from tests.support.nodes import all_disks_free, job_task_node, simulated_nodes, wait_for

NODES = ("n1", "n2", "n3")
LINES = 100_000
KMEANS_ARGS = ["40000", "16", "6", "8", "8"]
pytestmark = [pytest.mark.disruptive, pytest.mark.slow]  # as test_simulated_nodes.py; minutes long
IMAGES = ("spindle/base:bookworm", "spindle/spark:3.5", "spindle/engine:1.0")


@pytest.fixture(scope="module")
def nodes(platform_env) -> Iterator[dict]:
    with simulated_nodes(NODES, cpus="2", mem_mb="6144", images=IMAGES):
        yield {"token": platform_env["SPINDLE_INTERNAL_TOKEN"]}


def test_spark_spread_over_three_nodes_counts_words_exactly(nodes, database_url):
    wait_for("every node's disks free", lambda: all_disks_free(nodes["token"], NODES), 120)
    with live_user(database_url, "nodespark") as user:
        # Workers of 1536 MB: 1024 MB for executors (the manifest keeps 512 for the worker's JVM; a
        # job's executors take 768 MB). One per node: "spread" alone is a preference over the offers
        # gathered (once all four went on two nodes: the scheduler gathered only nodes whose offers it
        # had seen, and a just-registered agent's first offer had not come; it now asks the master for
        # its agents, 10391cf); anti-affinity with wait_for_resources asks for all three.
        options = {"roles": {"worker": {"count": 3, "mem_mb": 1536, "disks": {"hdd": 1}}},
                   "placement": {"strategy": "spread", "anti_affinity": ["worker"]}, "wait_for_resources": True}
        wait_for("offers with room on every node", lambda: user.plan("spark", "3.5", options).placeable, 60)
        cluster = wait_settled(user, user.launch("spark", "3.5", options), ("RUNNING", "FAILED"), timeout=600)
        try:
            assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
            workers = [m for m in cluster["members"] if m["role"] == "worker"]
            assert len(workers) == 3 and {w["node"] for w in workers} == set(NODES), workers
            job = wait_job(user, cluster, user.submit(cluster, JOBS / "spark_wordcount.py", args=[str(LINES)]))
            assert Counter(result_of(job)["counts"]) == expected_counts(LINES)
            assert job_task_node(job) in NODES, "the driver is a Mesos task on a node"
        finally:
            user.delete(cluster)
            wait_settled(user, cluster, ("DESTROYED",), timeout=300)


def test_engine_executors_on_three_nodes_exchange_partitions_and_get_exact_results(nodes, database_url):
    wait_for("every node's disks free", lambda: all_disks_free(nodes["token"], NODES), 120)
    with live_user(database_url, "nodeengine") as user:
        options = {"roles": {"executor": {"count": 3, "mem_mb": 1536, "disks": {"hdd": 1}}},
                   "placement": {"anti_affinity": ["executor"]}}
        # Launch once the scheduler's offers show every node's disks back: an offer rescinded for a
        # disk that just became free while a launch used it drops the launch (TASK_DROPPED, not retried yet).
        wait_for("offers with room on every node", lambda: user.plan("engine", "1.0", options).placeable, 60)
        cluster = wait_settled(user, user.launch("engine", "1.0", options), ("RUNNING", "FAILED"), timeout=600)
        try:
            assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
            executors = [m for m in cluster["members"] if m["role"] == "executor"]
            assert sorted(m["node"] for m in executors) == sorted(NODES), executors
            job = wait_job(user, cluster, user.submit(cluster, JOBS / "engine_wordcount.py", files=[CPP_WORDCOUNT],
                                                      args=[str(LINES)]))
            result = result_of(job)
            assert Counter(result["counts"]) == expected_counts(LINES)
            # Every executor member took part: each of the three (one per node) holds shuffle or
            # spill files, and the reduce side fetched the others' over TCP across nodes.
            assert result["hosts"] == sorted(m["ip"] for m in executors)
            assert len({f.split(":", 1)[0] for f in result["files"]}) == 3, result["files"]
            assert any("/fetch/" in f for f in result["files"]), result["files"]
            kmeans = wait_job(user, cluster, user.submit(cluster, JOBS / "engine_kmeans.py", args=KMEANS_ARGS))
            assert_same_centroids(result_of(kmeans)["centroids"], reference_centroids(KMEANS_ARGS))
            assert job_task_node(job) in NODES and job_task_node(kmeans) in NODES
        finally:
            user.delete(cluster)
            wait_settled(user, cluster, ("DESTROYED",), timeout=300)
