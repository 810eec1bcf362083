"""A Kafka writer that records every write the brokers acknowledged (and when), and a reader of a
whole topic: the node-loss tests' and benchmark's way of counting what was lost (Jepsen's way);
the login every client of a Spindle Kafka cluster needs; a fourth broker added and drained away."""
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import NodeNotReadyError, NotControllerError, UnknownBrokerIdError

from spindle_client.client import SpindleClient
from tests.support import acks
from tests.support.nodes import node_container, wait_for
from tests.support.through_restarts import refusals, resized_without, retrying, settled


def login(secret: str) -> dict[str, str]:
    """kafka-python's settings to log in to a Spindle Kafka cluster: user ``spindle``, the cluster's
    secret as password, SASL/SCRAM-SHA-512."""
    return {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "spindle", "sasl_plain_password": secret}


def create_topics(admin: KafkaAdminClient, topics: list[NewTopic], timeout: float = 60) -> None:
    """``admin.create_topics``, again while the client does not know yet the broker its metadata names
    as controller (a cluster just started: CI run 20 of 11-28 got ``UnknownBrokerIdError: 3`` from
    kafka-python, which unlike Kafka's own admin client does not retry it); the request never reached
    a broker then, so nothing was created."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin.create_topics(topics)
            return
        except (UnknownBrokerIdError, NodeNotReadyError, NotControllerError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


class Writer(threading.Thread):
    """Sends numbered records with acks=all until stopped; remembers when each was sent and when the
    brokers acknowledged it."""

    def __init__(self, bootstrap: list[str], topic: str, secret: str):
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", retries=10, linger_ms=5,
                                      request_timeout_ms=15_000, max_block_ms=60_000, **login(secret))
        self.topic, self.failed = topic, 0
        self.sent_at: dict[str, float] = {}
        self.acked_at: dict[str, float] = {}
        self.lock, self.stopping = threading.Lock(), threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            value = f"record-{len(self.sent_at)}"
            with self.lock:
                self.sent_at[value] = time.monotonic()
            future = self.producer.send(self.topic, key=value.encode(), value=value.encode())
            future.add_callback(lambda _, v=value: self._ack(v))
            future.add_errback(lambda _: self._fail())
            time.sleep(0.005)
        self.producer.flush(timeout=120)
        self.producer.close()

    def _ack(self, value: str) -> None:
        with self.lock:
            self.acked_at[value] = time.monotonic()

    def _fail(self) -> None:
        with self.lock:
            self.failed += 1

    @property
    def acked(self) -> set[str]:
        with self.lock:
            return set(self.acked_at)

    def acked_count(self) -> int:
        with self.lock:
            return len(self.acked_at)

    def serving_again_after(self, since: float) -> float | None:
        """Seconds from ``since`` to the first acknowledgement of a record sent after it (None: none yet)."""
        with self.lock:
            return acks.serving_again_after(self.sent_at, self.acked_at, since)

    def longest_pause(self, since: float) -> float:
        """The longest time without any acknowledgement from ``since`` to the last one."""
        with self.lock:
            return acks.longest_pause(self.acked_at.values(), since)


def in_sync(bootstrap: list[str], topic: str, secret: str, replicas: int = 3) -> bool:
    """Every partition of ``topic`` has ``replicas`` brokers in sync."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000, **login(secret))
    try:
        return all(len(p["isr_nodes"]) == replicas for p in admin.describe_topics([topic])[0]["partitions"])
    finally:
        admin.close()


def read_everything(bootstrap: list[str], topic: str, partitions: int, secret: str, timeout: float = 240) -> set[str]:
    """Every record of every partition of the topic, up to the end offsets it has now."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, consumer_timeout_ms=2000,
                             **login(secret))
    try:
        assigned = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(assigned)
        consumer.seek_to_beginning(*assigned)
        ends = consumer.end_offsets(assigned)
        values: set[str] = set()
        deadline = time.monotonic() + timeout
        while any(consumer.position(p) < ends[p] for p in assigned):
            assert time.monotonic() < deadline, {p.partition: (consumer.position(p), ends[p]) for p in assigned}
            for batch in consumer.poll(timeout_ms=1000).values():
                values.update(record.value.decode() for record in batch)
        return values
    finally:
        consumer.close()


def kafka_state(brokers: list[dict]) -> str:
    """What brokers on simulated nodes say (those left after a node's loss): the KRaft quorum's status
    and each one's last warnings."""
    said = []
    for broker in brokers:
        container = node_container(broker)
        login = ("umask 077; printf '%s\\n' security.protocol=SASL_PLAINTEXT sasl.mechanism=PLAIN "
                 "\"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                 "username=\\\"spindle\\\" password=\\\"$SPINDLE_CLUSTER_SECRET\\\";\" > /tmp/quorum.properties")
        quorum = container.exec_run(["sh", "-c", f"{login}; kafka metadata-quorum --bootstrap-controller "
                                     f"{brokers[0]['ip']}:9093 --command-config /tmp/quorum.properties "
                                     "describe --status 2>&1 | tail -n 12"])
        logs = [line for line in container.logs(tail=2000).decode(errors="replace").splitlines()
                if " WARN " in line or " ERROR " in line][-15:]
        said.append(f"{broker['member_id']}: quorum {quorum.output.decode(errors='replace')!r}; last warnings {logs}")
    return " | ".join(said)


def synced_partitions(admin: KafkaAdminClient, topic: str, partitions: int, timeout: float = 300) -> list[dict]:
    """The topic's partitions once there are ``partitions`` of them, each with 3 replicas in sync."""
    def synced() -> list[dict] | None:
        found = admin.describe_topics([topic])[0]["partitions"]
        return found if len(found) == partitions and all(len(p["isr_nodes"]) == 3 for p in found) else None
    return wait_for(f"every partition of {topic} in sync on 3 brokers", synced, timeout, every=2)


def resize_up_then_down(user: SpindleClient, cluster: dict, brokers: list[dict], secret: str,
                        container_of: Callable[[dict], Any], partitions: int) -> dict:
    """Issue 26's drains, on a cluster of the 3 ``brokers`` (``container_of`` finds a member's
    container: on this host or on a simulated node). Resized to 4: broker 4 joins as a broker only
    (brokers 1 to 3 are the KRaft quorum); a topic of replication 3 and min.insync.replicas 2 gets
    replicas on it. Resized to 3 while a writer with acks=all goes on: broker 4 moves its partitions to
    the three that stay (DRAINING → DRAINED) before Spindle removes it; every acknowledged record reads
    back and every partition is in sync on brokers 1 to 3. Resized to 2: broker 3 refuses (it votes in
    the quorum), stays, and the timeline says why. The cluster at the end."""
    bootstrap = [f"{m['ip']}:9092" for m in brokers]
    retrying(lambda: user.resize(cluster, {"broker": 4}))

    def grown() -> dict | None:
        found = retrying(lambda: user.cluster(cluster))
        assert found["state"] in ("RUNNING", "RESIZING"), (found["reason_code"], found["reason"])
        return found if len(found["members"]) == 4 and found["state"] == "RUNNING" else None
    cluster = wait_for("the fourth broker", grown, 600, every=2)
    [leaving] = [m for m in cluster["members"] if m["member_id"].endswith("-broker-4")]
    config = container_of(leaving).exec_run(["cat", "/etc/kafka/server.properties"]).output.decode().splitlines()
    assert "process.roles=broker" in config, config
    topic = f"resize-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000, **login(secret))
    try:
        wait_for("broker 4 in the cluster's metadata",
                 lambda: 4 in {b["broker_id"] for b in admin.describe_cluster()["brokers"]}, 120, every=2)
        create_topics(admin, [NewTopic(topic, partitions, 3, topic_configs={"min.insync.replicas": "2"})])
        placed = synced_partitions(admin, topic, partitions, timeout=120)
        assert any(4 in p["replica_nodes"] for p in placed), placed
        writer = Writer(bootstrap, topic, secret)
        writer.start()
        try:
            wait_for("200 acknowledged records", lambda: writer.acked_count() >= 200, 120)
            seen = user.events(cluster)[-1].seq
            retrying(lambda: user.resize(cluster, {"broker": 3}))
            cluster = resized_without(user, cluster, leaving["member_id"], seen, timeout=900)
            time.sleep(2)  # a few writes more with the broker gone
        finally:
            writer.stopping.set()
            writer.join(timeout=180)
        steps = [e for e in user.events(cluster, seen) if e.member_id == leaving["member_id"]]
        states = [e.state for e in steps]
        assert states.index("DRAINING") < states.index("DRAINED") < states.index("REMOVING") < \
            states.index("REMOVED"), states
        assert "no partition has a replica on broker 4" in next(e.message for e in steps if e.state == "DRAINED")
        for partition in synced_partitions(admin, topic, partitions):
            assert set(partition["replica_nodes"]) == {1, 2, 3}, partition
    finally:
        admin.close()
    acked = writer.acked
    assert len(acked) >= 200, (len(acked), writer.failed)
    lost = acked - read_everything(bootstrap, topic, partitions, secret)
    assert not lost, f"{len(lost)} of {len(acked)} acknowledged records lost: {sorted(lost)[:10]}"

    # Broker 3 votes in the KRaft quorum: its removal is refused, it stays, the count is 3 again.
    seen = user.events(cluster)[-1].seq
    retrying(lambda: user.resize(cluster, {"broker": 2}))
    refused = refusals(user, cluster, seen, timeout=300)
    assert refused[0].member_id == brokers[2]["member_id"], refused
    assert "DRAIN_FAILED" in refused[0].message and "voter of the cluster's KRaft quorum" in refused[0].message
    cluster = settled(user, cluster, ("RUNNING",), timeout=300)
    assert retrying(lambda: user.cluster(cluster))["options"]["roles"]["broker"]["count"] == 3
    assert sorted(m["member_id"] for m in cluster["members"]) == sorted(m["member_id"] for m in brokers)
    return cluster
