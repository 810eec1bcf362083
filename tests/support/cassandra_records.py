"""A Cassandra writer that records every row Cassandra acknowledged, and a check that reads them
all back (the node-loss and resize tests' way of counting what was lost); a driver session over
some members, logged in as the cluster's user ``spindle`` with its secret. Rows are
``<keyspace>.kv (k int PRIMARY KEY, v text)`` with ``v = value-<k>``."""
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from cassandra import ConsistencyLevel
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, Session
from cassandra.concurrent import execute_concurrent_with_args
from cassandra.policies import RoundRobinPolicy

from tests.support import acks


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
