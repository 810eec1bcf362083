"""A Kafka writer that records every write the brokers acknowledged (and when), and a reader of a
whole topic: the node-loss tests' and benchmark's way of counting what was lost (Jepsen's way);
the login every client of a Spindle Kafka cluster needs."""
import threading
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import NodeNotReadyError, NotControllerError, UnknownBrokerIdError

from tests.support import acks
from tests.support.nodes import node_container


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
