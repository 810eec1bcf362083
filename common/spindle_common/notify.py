"""Push between services through PostgreSQL ``LISTEN``/``NOTIFY``.

A service writes its own state (a task's new state, a cluster's new event) and, in the same
transaction, notifies a channel with the id of what changed; PostgreSQL delivers the notification
only when that transaction commits. The state itself stays in the writer's tables (read through its
API), so a listener that was away loses nothing: whenever it (re)connects it is told to look at
everything once (``on_connect``), then it only hears about what changes.
"""
import logging
import threading
from collections.abc import Callable, Iterable

import psycopg
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

log = logging.getLogger("spindle.notify")

# Channels and what their payload names.
TASKS = "spindle_tasks"  # scheduler: a task of this cluster changed (payload: cluster id)
CLUSTERS = "spindle_clusters"  # orchestrator: this cluster was created, asked to go, or its job ended
EVENTS = "spindle_events"  # orchestrator: this cluster's timeline has a new event


def notify(session: Session, channel: str, payload: str) -> None:
    """Notify ``channel`` when ``session``'s transaction commits (never if it rolls back)."""
    session.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload})


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://…``) as psycopg itself takes it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# While the database stays away, a listener says so again every this many attempts (one a second).
RECONNECT_LOG_EVERY = 60


class Listener:
    """A thread that listens on ``channels`` and calls ``deliver(channel, payload)`` for each
    notification; ``on_connect()`` runs after every (re)connection, before notifications flow
    (the moment to look at everything once). Reconnects after 1 s when the connection breaks."""

    def __init__(self, database_url: str, channels: Iterable[str], deliver: Callable[[str, str], None],
                 on_connect: Callable[[], None] = lambda: None, name: str = "listener"):
        self.url = libpq_url(database_url)
        self.channels = tuple(channels)
        self.deliver = deliver
        self.on_connect = on_connect
        self.stopping = threading.Event()
        self.connected = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "Listener":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)

    def _run(self) -> None:
        failures = 0  # in a row: the first is logged whole, then one line a minute while it lasts
        while not self.stopping.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    for channel in self.channels:
                        conn.execute(f'LISTEN "{channel}"')
                    if failures:
                        log.info("listening on %s again after %d failed attempts", ", ".join(self.channels), failures)
                    failures = 0
                    self.connected.set()
                    self.on_connect()
                    while not self.stopping.is_set():
                        for note in conn.notifies(timeout=1.0):
                            self.deliver(note.channel, note.payload)
            except Exception as exc:
                self.connected.clear()
                if not self.stopping.is_set():
                    failures += 1
                    if failures == 1:
                        log.exception("listening on %s failed; reconnecting", ", ".join(self.channels))
                    elif failures % RECONNECT_LOG_EVERY == 0:
                        log.warning("listening on %s: still failing after %d attempts: %s",
                                    ", ".join(self.channels), failures, exc)
                    self.stopping.wait(1.0)
