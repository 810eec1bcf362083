#!/usr/bin/env python3
"""Kafka on three simulated nodes: how soon writes are acknowledged again after a whole node's loss.

One command (platform up, run as root, nothing else running): ``.venv/bin/python bench/kafka_node_loss.py``.

Three brokers (one per node: replicas apart; replication 3, ``min.insync.replicas`` 2, 6 partitions)
and a writer with ``acks=all`` on this machine sending a record every 5 ms. Each round kills one node
whole (``deploy/node kill``: its dockerd, agents and broker at once; n1, n2, n3 in turn) and measures,
from the moment of the kill: the first acknowledgement of a record sent after it ("serving again"),
and the longest time without any acknowledgement. Then it checks that no acknowledged record is
missing, starts the node again and waits until its broker is replaced there (same IP) and every
partition is in sync on three brokers. Median of ``--rounds`` (3).

Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kafka import KafkaAdminClient  # noqa: E402
from kafka.admin import NewTopic  # noqa: E402

from tests.conftest import read_env_file  # noqa: E402
from tests.support.kafka_records import Writer, login, read_everything  # noqa: E402
from tests.support.live_users import cluster_secret, live_user  # noqa: E402
from tests.support.nodes import NODES, node_disks, sh, simulated_nodes, wait_for  # noqa: E402
from tests.support.through_restarts import replaced  # noqa: E402

HEADING = "## Kafka through a node's loss (simulated nodes)"
TABLE_HEADER = ("| measured (UTC) | kill → first acknowledged write sent after it: median (rounds) "
                "| longest pause in acknowledgements: median (rounds) | acknowledged records lost "
                "| machine | command |\n|---|---|---|---|---|---|\n")
PARTITIONS = 6
LAUNCH = {"roles": {"broker": {"count": 3, "cpus": 0.5, "mem_mb": 768, "disks": {"hdd": 1}}},
          "settings": {"default_replication_factor": 3, "min_insync_replicas": 2, "num_partitions": PARTITIONS}}


def in_sync(bootstrap: list[str], topic: str, secret: str) -> bool:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000, **login(secret))
    try:
        return all(len(p["isr_nodes"]) == 3 for p in admin.describe_topics([topic])[0]["partitions"])
    finally:
        admin.close()


def round_of(client, cluster: dict, bootstrap: list[str], topic: str, dead: str,
             secret: str) -> tuple[dict, float, float, int]:
    """(cluster, serving again s, longest pause s, acknowledged records lost) for one node's loss."""
    writer = Writer(bootstrap, topic, secret)
    writer.start()
    try:
        wait_for("acknowledged writes", lambda: writer.acked_count() >= 300, 120)
        killed_at = time.monotonic()
        sh("deploy/node", "kill", dead)
        serving = wait_for("a write sent after the kill acknowledged", lambda: writer.serving_again_after(killed_at),
                           300, every=0.1)
        at = writer.acked_count()
        wait_for("writes going on", lambda: writer.acked_count() >= at + 300, 120)
    finally:
        writer.stopping.set()
        writer.join(timeout=180)
    pause = writer.longest_pause(killed_at)
    [victim] = [m for m in cluster["members"] if m["node"] == dead]
    alive = [f"{m['ip']}:9092" for m in cluster["members"] if m["node"] != dead]
    lost = len(writer.acked - read_everything(alive, topic, PARTITIONS, secret))
    sh("deploy/node", "start", dead)
    cluster, member = replaced(client, cluster, victim["member_id"], timeout=600)
    assert (member["ip"], member["node"]) == (victim["ip"], dead), member
    wait_for("every partition in sync on three brokers", lambda: in_sync(bootstrap, topic, secret), 300, every=2)
    return cluster, serving, pause, lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    token = env["SPINDLE_INTERNAL_TOKEN"]
    serving, pauses, lost = [], [], 0
    with simulated_nodes(NODES, cpus="2", mem_mb="6144", images=("spindle/base:bookworm", "spindle/kafka:4.0")), \
            live_user(env["SPINDLE_DATABASE_URL"], "benchkafka") as client:
        cluster = client.launch("kafka", "4.0", LAUNCH)
        cluster = wait_for("RUNNING", lambda: (c := client.cluster(cluster))["state"] in ("RUNNING", "FAILED") and c,
                           600)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        try:
            bootstrap = [f"{m['ip']}:9092" for m in cluster["members"]]
            secret = cluster_secret(env["SPINDLE_DATABASE_URL"], cluster["id"])
            topic = f"bench-{uuid.uuid4().hex[:6]}"
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60_000, **login(secret))
            admin.create_topics([NewTopic(topic, num_partitions=PARTITIONS, replication_factor=3,
                                          topic_configs={"min.insync.replicas": "2"})])
            admin.close()
            wait_for("the topic in sync", lambda: in_sync(bootstrap, topic, secret), 120, every=1)
            for i in range(args.rounds):
                cluster, first, pause, missing = round_of(client, cluster, bootstrap, topic, NODES[i % len(NODES)],
                                                          secret)
                print(f"round {i + 1}: {NODES[i % len(NODES)]} killed: serving again after {first:.2f} s, "
                      f"longest pause {pause:.2f} s, {missing} acknowledged records lost", flush=True)
                serving.append(first)
                pauses.append(pause)
                lost += missing
        finally:
            client.delete(cluster)
            wait_for("DESTROYED", lambda: client.cluster(cluster)["state"] == "DESTROYED", 300)
            wait_for("every node's disks free", lambda: all(
                d["state"] == "free" for n in NODES for d in node_disks(token, n)), 300)
    print(json.dumps({"serving_again_s": [round(x, 2) for x in serving],
                      "longest_pause_s": [round(x, 2) for x in pauses], "lost": lost}))
    if args.no_record:
        return

    def cell(values: list[float]) -> str:
        return f"**{statistics.median(values):.1f} s** ({' · '.join(f'{v:.1f}' for v in values)})"
    command = ".venv/bin/python bench/kafka_node_loss.py" + (f" --rounds {args.rounds}" if args.rounds != 3 else "")
    record(HEADING, TABLE_HEADER, f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {cell(serving)} | {cell(pauses)} | {lost} "
                                  f"| {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
