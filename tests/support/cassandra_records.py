"""A Cassandra writer that records every row Cassandra acknowledged, and a check that reads them
all back (the node-loss and resize tests' way of counting what was lost); a driver session over
some members, logged in as the cluster's user ``spindle`` with its secret; a resize from 3 nodes to 2
under a writer. Rows are ``<keyspace>.kv (k int PRIMARY KEY, v text)`` with ``v = value-<k>``."""
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from cassandra import ConsistencyLevel
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import RoundRobinPolicy

from spindle_client.client import SpindleClient
from tests.support import acks
from tests.support.nodes import wait_for
from tests.support.through_restarts import refusals, resized_without, retrying, settled


@contextmanager
def connected(members: list[dict], secret: str, user: str = "spindle") -> Iterator[Session]:
    """A driver session over ``members`` (QUORUM unless a statement says otherwise), logged in."""
    profile = ExecutionProfile(consistency_level=ConsistencyLevel.QUORUM, load_balancing_policy=RoundRobinPolicy(),
                               request_timeout=30)
    cluster = Cluster([m["ip"] for m in members], protocol_version=5, connect_timeout=10,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                      auth_provider=PlainTextAuthProvider(username=user, password=secret))
    try:
        yield cluster.connect()
    finally:
        cluster.shutdown()


class Writer(threading.Thread):
    """Rows written one after another at QUORUM (keys from ``first`` up) until stopped; ``acked``:
    the keys Cassandra acknowledged, ``failed``: the writes it did not; when each was sent and
    acknowledged (``sent_at``, ``acked_at``: ``time.monotonic()``)."""

    def __init__(self, session: Session, keyspace: str, first: int = 0):
        super().__init__(daemon=True)
        self.session = session
        self.insert = session.prepare(f"INSERT INTO {keyspace}.kv (k, v) VALUES (?, ?)")
        self.next, self.failed = first, 0
        self.acked: list[int] = []
        self.sent_at: dict[int, float] = {}
        self.acked_at: dict[int, float] = {}
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            key = self.next
            self.sent_at[key] = time.monotonic()
            try:
                self.session.execute(self.insert, (key, f"value-{key}"))
                self.acked_at[key] = time.monotonic()
                self.acked.append(key)
            except Exception:  # noqa: BLE001 — an unacknowledged write is allowed; it is counted
                self.failed += 1
            self.next += 1
            time.sleep(0.02)

    def serving_again_after(self, since: float) -> float | None:
        """Seconds from ``since`` to the first acknowledgement of a row sent after it (None: none yet)."""
        return acks.serving_again_after(self.sent_at, dict(self.acked_at), since)

    def longest_pause(self, since: float) -> float:
        """The longest time without any acknowledgement from ``since`` to the last one."""
        return acks.longest_pause(list(self.acked_at.values()), since)

    def stop(self) -> list[int]:
        self.stopping.set()
        self.join(timeout=60)
        return self.acked


def not_read_back(session: Session, keyspace: str, keys: Sequence[int], consistency: int) -> list[int]:
    """The keys whose row does not read back as written at ``consistency`` (a failed read counts)."""
    select = session.prepare(f"SELECT k, v FROM {keyspace}.kv WHERE k = ?")
    select.consistency_level, select.is_idempotent = consistency, True
    results = execute_concurrent_with_args(session, select, [(k,) for k in keys], concurrency=16,
                                           raise_on_first_error=False)
    return [k for k, (ok, rows) in zip(keys, results, strict=True)
            if not ok or [(r.k, r.v) for r in rows] != [(k, f"value-{k}")]]


def up_normal(member: dict, container_of: Callable[[dict], Any]) -> set[str]:
    """The nodes ``member`` sees Up and Normal (`nodetool status`)."""
    out = container_of(member).exec_run(["nodetool", "status"])
    if out.exit_code != 0:
        return set()
    return {line.split()[1] for line in out.output.decode().splitlines() if line.startswith("UN ")}


def wait_up_normal(members: list[dict], container_of: Callable[[dict], Any], timeout: float = 300) -> None:
    """Until each of ``members`` sees exactly them Up and Normal."""
    ips = {m["ip"] for m in members}
    try:
        wait_for("the ring Up and Normal", lambda: all(up_normal(m, container_of) == ips for m in members),
                 timeout, every=2)
    except AssertionError as exc:  # what each one sees, as before the helper moved here
        raise AssertionError(f"{exc}: {({m['member_id']: up_normal(m, container_of) for m in members})}") from None


def node_count(user: SpindleClient, cluster: dict) -> int:
    return retrying(lambda: user.cluster(cluster))["options"]["roles"]["node"]["count"]


def resize_to_two(user: SpindleClient, cluster: dict, nodes: list[dict], secret: str,
                  container_of: Callable[[dict], Any], keyspace: str, written: list[int]) -> dict:
    """3 ``nodes`` resized to 2 (issue 26's drains; ``container_of`` finds a member's container, on this
    host or on a simulated node; ``written``: the keys of ``keyspace`` acknowledged so far): with a
    keyspace of replication factor 3 Cassandra refuses to decommission (2 nodes cannot hold 3
    replicas), so the node stays and the timeline says why; with factor 2 the leaving node runs
    `nodetool decommission` (DRAINING → DRAINED: its replicas streamed to the others) before Spindle
    removes it, while a writer goes on at QUORUM: every acknowledged row reads back at ALL from the 2
    nodes left. The cluster once resized."""
    leaving, staying = nodes[-1], nodes[:-1]
    # Refused: 2 nodes cannot keep 3 replicas. The node stays, the count goes back to 3.
    seen = user.events(cluster)[-1].seq
    retrying(lambda: user.resize(cluster, {"node": 2}))
    refused = refusals(user, cluster, seen, timeout=600)
    assert refused[0].member_id == leaving["member_id"], refused
    assert "DRAIN_FAILED" in refused[0].message and "Not enough live nodes" in refused[0].message, refused
    cluster = settled(user, cluster, ("RUNNING",), timeout=300)
    assert node_count(user, cluster) == 3
    assert sorted(m["member_id"] for m in cluster["members"]) == [m["member_id"] for m in nodes]
    wait_up_normal(nodes, container_of)

    # Factor 2 (system_distributed's too, 3 by default, and system_auth's, which Spindle makes 3): 2
    # nodes can hold it; the node is decommissioned, then removed, while rows go on being written.
    seen = user.events(cluster)[-1].seq
    with connected(nodes, secret) as session:
        for name in (keyspace, "system_distributed", "system_auth"):
            session.execute(f"ALTER KEYSPACE {name} WITH replication = "
                            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
        writer = Writer(session, keyspace, first=max(written, default=-1) + 1)
        writer.start()
        try:
            retrying(lambda: user.resize(cluster, {"node": 2}))
            cluster = resized_without(user, cluster, leaving["member_id"], seen, timeout=900)
            time.sleep(2)  # a few writes more with the node gone
        finally:
            acked = writer.stop()
    steps = [e for e in user.events(cluster, seen) if e.member_id == leaving["member_id"]]
    states = [e.state for e in steps]
    assert states.index("DRAINING") < states.index("DRAINED") < states.index("REMOVING") < \
        states.index("REMOVED"), states
    assert "decommissioned" in next(e.message for e in steps if e.state == "DRAINED")
    assert node_count(user, cluster) == 2
    assert acked and len(acked) > 50, (len(acked), writer.failed)
    wait_up_normal(staying, container_of)  # the ring is the 2 nodes left: the leaving one is gone from it
    with connected(staying, secret) as session:
        keys = written + acked
        lost = not_read_back(session, keyspace, keys, ConsistencyLevel.ALL)
        assert lost == [], f"{len(lost)} of {len(keys)} acknowledged rows not read back at ALL: {lost[:10]}"
    return cluster
