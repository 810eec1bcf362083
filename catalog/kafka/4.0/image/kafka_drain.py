#!/opt/kafka-python/bin/python3
"""A Kafka broker leaving its cluster (Spindle's drain of a member a resize removes, run in that
broker itself): every partition with a replica on a leaving broker gets one on a broker that stays
instead (Kafka's own partition reassignment: the new replica catches up, joins the ISR, then the old
one is dropped), so no acknowledged record has fewer copies than before while the broker goes.

    spindle-drain-broker start IDS   IDS: the leaving brokers' ids, comma-separated. Exit 0: the
                                     reassignments are under way (or nothing was on them); 1: refused
                                     (this broker votes in the KRaft quorum, or a topic's replication
                                     factor needs more brokers than would be left), with the reason.
    spindle-drain-broker done IDS    0: no partition has a replica on them; 1: still moving (what is
                                     not being moved is moved again); 3: it cannot finish (the reason).

It talks to the broker it runs in (``advertised.listeners`` of /etc/kafka/server.properties), logged
in as ``spindle`` with the cluster's secret (``SPINDLE_CLUSTER_SECRET``, in every member's env)."""
import logging
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

CONFIG = "/etc/kafka/server.properties"
TIMEOUT_MS = 30_000
REREADS = 5  # of a ``done`` whose plan says the drain cannot finish, 2 s apart


@dataclass
class Plan:
    """Each partition's new replicas (the partitions on leaving brokers), or why it cannot be made."""

    moves: dict[tuple[str, int], list[int]] = field(default_factory=dict)
    refusals: list[str] = field(default_factory=list)


def plan(partitions: dict[tuple[str, int], list[int]], brokers: Iterable[int], leaving: Iterable[int],
         removing: dict[tuple[str, int], list[int]] | None = None) -> Plan:
    """Replicas on ``leaving`` brokers replaced by the least loaded of the brokers that stay (not
    already holding the partition), the kept replicas first in their order (the preferred leader
    stays when it stays). ``removing``: the replicas a reassignment under way is dropping from a
    partition (its replicas then list old and new ones together): they do not count."""
    gone = set(leaving)
    partitions = {tp: [b for b in replicas if b not in (removing or {}).get(tp, ())]
                  for tp, replicas in partitions.items()}
    staying = sorted(set(brokers) - gone)
    load = {b: 0 for b in staying}
    for replicas in partitions.values():
        for b in replicas:
            if b in load:
                load[b] += 1
    result = Plan()
    short: dict[str, int] = {}
    for (topic, index), replicas in sorted(partitions.items()):
        if not gone & set(replicas):
            continue
        kept = [b for b in replicas if b not in gone]
        candidates = sorted((b for b in staying if b not in kept), key=lambda b: (load[b], b))
        need = len(replicas) - len(kept)
        if len(candidates) < need:
            short[topic] = len(replicas)
            continue
        for b in candidates[:need]:
            load[b] += 1
        result.moves[(topic, index)] = kept + candidates[:need]
    result.refusals = [f"topic {topic} has replication factor {factor}: only {len(staying)} brokers would be "
                       f"left ({', '.join(map(str, staying)) or 'none'})" for topic, factor in sorted(short.items())]
    return result


def properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def ids(text: str) -> list[int]:
    try:
        return sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise SystemExit(f"broker ids are integers, comma-separated: {text!r}") from None


def survey(admin, leaving: list[int]) -> tuple[dict[tuple[str, int], list[int]], Plan]:
    """Every partition's replicas as the cluster says now, and the plan that moves them off ``leaving``."""
    brokers = [b["broker_id"] for b in admin.describe_cluster()["brokers"]]
    moving = admin.list_partition_reassignments(timeout_ms=TIMEOUT_MS)
    partitions = {(t["name"], p["partition_index"]): list(p["replica_nodes"])
                  for t in admin.describe_topics() for p in t["partitions"]}
    return partitions, plan(partitions, brokers, leaving, {(tp.topic, tp.partition): m["removing_replicas"]
                                                           for tp, m in moving.items()})


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "done"):
        print("usage: spindle-drain-broker start|done IDS", file=sys.stderr)
        return 2
    step, leaving = argv[0], ids(argv[1])
    with open(CONFIG) as f:
        config = properties(f.read())
    if step == "start" and "controller" in config.get("process.roles", ""):
        print(f"broker {config.get('node.id')} is a voter of the cluster's KRaft quorum (brokers 1 to 3 are): "
              "it cannot be removed")
        return 1
    from kafka import KafkaAdminClient, TopicPartition  # the image's kafka-python

    logging.getLogger("kafka").setLevel(logging.CRITICAL)  # the last line printed is what Spindle's timeline shows

    bootstrap = config["advertised.listeners"].split("//", 1)[1].split(",")[0]
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=TIMEOUT_MS, client_id="spindle-drain",
                             security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-512",
                             sasl_plain_username="spindle", sasl_plain_password=os.environ["SPINDLE_CLUSTER_SECRET"])
    try:
        partitions, todo = survey(admin, leaving)
        # A reassignment that ends between the two reads (or metadata a broker has not caught up
        # with) shows a partition with its old and new replicas and none being removed: read again
        # before saying the drain cannot finish.
        for _ in range(REREADS if step == "done" else 0):
            if not todo.refusals:
                break
            time.sleep(2)
            partitions, todo = survey(admin, leaving)
        on_them = sum(1 for replicas in partitions.values() if set(leaving) & set(replicas))
        names = ", ".join(map(str, leaving))
        if todo.refusals:
            print("; ".join(todo.refusals))
            return 1 if step == "start" else 3
        if not on_them:
            print(f"no partition has a replica on broker {names}")
            return 0
        send = {TopicPartition(t, i): r for (t, i), r in todo.moves.items()}
        if send:
            errors = {tp: e for tp, e in admin.alter_partition_reassignments(send, timeout_ms=TIMEOUT_MS).items() if e}
            if errors:
                print(f"Kafka refused to move {len(errors)} partitions: "
                      + ", ".join(f"{tp.topic}-{tp.partition}: {e.__name__}" for tp, e in sorted(errors.items())[:5]))
                return 1 if step == "start" else 3
        sent = f" ({len(send)} sent now)" if step == "done" else ""
        print(f"moving {on_them} partitions off broker {names}{sent}")
        return 0 if step == "start" else 1
    finally:
        admin.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
