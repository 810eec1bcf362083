#!/usr/bin/env python3
"""Kafka and Cassandra on three simulated nodes: how soon each acknowledges writes again after a whole
node's loss, and that no acknowledged write is lost.

One command (platform up, run as root, nothing else running): ``.venv/bin/python bench/node_loss.py``.

Side by side on the nodes (deploy/node: each its own network namespace, dockerd, disks and agents):
Kafka with three brokers (replicas apart, one per node; replication 3, ``min.insync.replicas`` 2,
6 partitions) and a writer on this machine sending a record every 5 ms with ``acks=all``; Cassandra
with three nodes (one per node; a keyspace replicated 3 times) and a writer of one row after another
at QUORUM. Each round kills one node whole (``deploy/node kill``: its dockerd, agents, broker and
Cassandra node at once; n1, n2, n3 in turn) and measures for each product, from the moment of the
kill: the first acknowledgement of a write sent after it ("serving again"), and the longest time
without any acknowledgement. Then it checks that every acknowledged record and row reads back (rows
at QUORUM from the two nodes left), starts the node again and waits until its broker and Cassandra
node are replaced there (same IPs, fresh disks), every partition is in sync on three brokers and
every row reads at ALL. Median of ``--rounds`` (3).

Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from results import machine, median_cell, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cassandra import ConsistencyLevel  # noqa: E402
from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

from tests.conftest import read_env_file  # noqa: E402
from tests.integration.platform.cluster_checks import wait_settled  # noqa: E402
from tests.support.cassandra_records import Writer as RowWriter  # noqa: E402
from tests.support.cassandra_records import connected, not_read_back  # noqa: E402
from tests.support.kafka_records import Writer, create_topics, in_sync, kafka_state, login, read_everything  # noqa: E402
from tests.support.live_users import cluster_secret, live_user  # noqa: E402
from tests.support.nodes import NODES, all_disks_free, sh, simulated_nodes, wait_for  # noqa: E402
from tests.support.through_restarts import replaced  # noqa: E402

HEADING = "## Kafka and Cassandra through a node's loss (simulated nodes)"
TABLE_HEADER = ("| measured (UTC) | Kafka: kill → first acknowledged write sent after it, median (rounds) "
                "| Kafka: longest pause | Cassandra (QUORUM): kill → first acknowledged write sent after it "
                "| Cassandra: longest pause | acknowledged writes lost | machine | command |\n"
                "|---|---|---|---|---|---|---|---|\n")
PARTITIONS = 6
KEYSPACE = "bench_node_loss"
# As the nodes' test (tests/integration/nodes/test_products_on_nodes.py): each node offers 2 cpus.
KAFKA = {"roles": {"broker": {"count": 3, "cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 1}}},
         "settings": {"default_replication_factor": 3, "min_insync_replicas": 2, "num_partitions": PARTITIONS}}
CASSANDRA = {"roles": {"node": {"count": 3, "cpus": 0.9, "mem_mb": 1024, "disks": {"hdd": 1}}},
             "wait_for_resources": True}


def running(client, cluster: dict, timeout: float) -> dict:
    cluster = wait_settled(client, cluster, ("RUNNING", "FAILED"), timeout)
    assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
    return cluster


def back_in_place(client, cluster: dict, node: str) -> dict:
    """The cluster once its member on ``node`` (killed with it) is replaced there with its IP."""
    [victim] = [m for m in cluster["members"] if m["node"] == node]
    cluster, member = replaced(client, cluster, victim["member_id"], timeout=900,
                               replacements=victim["replacements"] + 1)
    assert (member["ip"], member["node"]) == (victim["ip"], node), member
    return cluster


class Round:
    """One node's loss under both writers: what each measured."""

    def __init__(self):
        self.kafka_serving = self.kafka_pause = self.rows_serving = self.rows_pause = 0.0
        self.lost = 0


def round_of(client, kafka: dict, cassandra: dict, topic: str, secrets: dict[str, str], session, dead: str,
             first_key: int) -> tuple[dict, dict, Round, int]:
    """Kill ``dead`` under both writers, check nothing acknowledged is lost, bring it back."""
    measured = Round()
    bootstrap = [f"{m['ip']}:9092" for m in kafka["members"]]
    writer, rows = Writer(bootstrap, topic, secrets["kafka"]), RowWriter(session, KEYSPACE, first=first_key)
    writer.start()
    rows.start()
    killed = False
    try:
        wait_for("acknowledged writes", lambda: writer.acked_count() >= 300 and len(rows.acked) >= 100, 120)
        killed_at = time.monotonic()
        killed = True
        sh("deploy/node", "kill", dead)
        try:
            measured.kafka_serving = wait_for("a record sent after the kill acknowledged",
                                              lambda: writer.serving_again_after(killed_at), 300, every=0.1)
        except AssertionError as exc:  # seen (issue 26's open Kafka node loss): say what the brokers left think
            brokers = [m for m in kafka["members"] if m["node"] != dead]
            raise AssertionError(f"{exc}; {kafka_state(brokers)}") from None
        measured.rows_serving = wait_for("a row sent after the kill acknowledged",
                                         lambda: rows.serving_again_after(killed_at), 300, every=0.1)
        at, rows_at = writer.acked_count(), len(rows.acked)
        wait_for("writes going on", lambda: writer.acked_count() >= at + 300 and len(rows.acked) >= rows_at + 100,
                 180)
    except BaseException:
        if killed:  # the node back, so that the clusters can go and its disks be freed
            sh("deploy/node", "start", dead)
        raise
    finally:
        writer.stopping.set()
        acked_rows = rows.stop()
        writer.join(timeout=180)
    measured.kafka_pause, measured.rows_pause = writer.longest_pause(killed_at), rows.longest_pause(killed_at)
    alive = [f"{m['ip']}:9092" for m in kafka["members"] if m["node"] != dead]
    measured.lost = len(writer.acked - read_everything(alive, topic, PARTITIONS, secrets["kafka"]))
    with connected([m for m in cassandra["members"] if m["node"] != dead], secrets["cassandra"]) as survivors:
        measured.lost += len(not_read_back(survivors, KEYSPACE, acked_rows, ConsistencyLevel.QUORUM))

    sh("deploy/node", "start", dead)
    kafka, cassandra = back_in_place(client, kafka, dead), back_in_place(client, cassandra, dead)
    wait_for("every partition in sync on three brokers", lambda: in_sync(bootstrap, topic, secrets["kafka"]), 300,
             every=2)
    wait_for("every row read at ALL", lambda: not not_read_back(session, KEYSPACE, acked_rows, ConsistencyLevel.ALL),
             600, every=5)
    return kafka, cassandra, measured, rows.next


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    token = env["SPINDLE_INTERNAL_TOKEN"]
    rounds: list[Round] = []
    images = ("spindle/base:bookworm", "spindle/kafka:4.0", "spindle/cassandra:5.0")
    with simulated_nodes(NODES, disks="2:hdd", cpus="2", mem_mb="6144", images=images), \
            live_user(env["SPINDLE_DATABASE_URL"], "benchloss") as client:
        kafka = client.launch("kafka", "4.0", KAFKA)
        cassandra = client.launch("cassandra", "5.0", CASSANDRA)
        try:
            kafka, cassandra = running(client, kafka, 600), running(client, cassandra, 900)
            secrets = {name: cluster_secret(env["SPINDLE_DATABASE_URL"], c["id"])
                       for name, c in (("kafka", kafka), ("cassandra", cassandra))}
            bootstrap = [f"{m['ip']}:9092" for m in kafka["members"]]
            topic = f"bench-{uuid.uuid4().hex[:6]}"
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000, **login(secrets["kafka"]))
            try:
                create_topics(admin, [NewTopic(topic, num_partitions=PARTITIONS, replication_factor=3,
                                               topic_configs={"min.insync.replicas": "2"})])
            finally:
                admin.close()
            wait_for("the topic in sync", lambda: in_sync(bootstrap, topic, secrets["kafka"]), 120, every=1)
            with connected(cassandra["members"], secrets["cassandra"]) as session:
                wait_for("every Cassandra node up in the driver's view", lambda: len(
                    [h for h in session.cluster.metadata.all_hosts() if h.is_up]) == 3, 300)
                session.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = "
                                "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
                session.execute(f"CREATE TABLE {KEYSPACE}.kv (k int PRIMARY KEY, v text)")
                first_key = 0
                for i in range(args.rounds):
                    dead = NODES[i % len(NODES)]
                    kafka, cassandra, measured, first_key = round_of(client, kafka, cassandra, topic, secrets,
                                                                     session, dead, first_key)
                    print(f"round {i + 1}: {dead} killed: Kafka serving again after "
                          f"{measured.kafka_serving:.2f} s (longest pause {measured.kafka_pause:.2f} s), Cassandra "
                          f"after {measured.rows_serving:.2f} s (longest pause {measured.rows_pause:.2f} s); "
                          f"{measured.lost} acknowledged writes lost", flush=True)
                    rounds.append(measured)
        finally:
            for cluster in (kafka, cassandra):
                client.delete(cluster)
            for cluster in (kafka, cassandra):
                wait_for("DESTROYED", lambda c=cluster: client.cluster(c)["state"] == "DESTROYED", 300, every=2)
            wait_for("every node's disks free", lambda: all_disks_free(token, NODES), 300)
    columns = {name: [getattr(r, name) for r in rounds]
               for name in ("kafka_serving", "kafka_pause", "rows_serving", "rows_pause")}
    lost = sum(r.lost for r in rounds)
    print(json.dumps({**{name: [round(v, 2) for v in values] for name, values in columns.items()}, "lost": lost}))
    if args.no_record:
        return
    command = ".venv/bin/python bench/node_loss.py" + (f" --rounds {args.rounds}" if args.rounds != 3 else "")
    cells = " | ".join(median_cell(values) for values in columns.values())  # in TABLE_HEADER's order
    record(HEADING, TABLE_HEADER,
           f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {cells} | {lost} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
