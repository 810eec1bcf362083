"""Live timelines: a cluster's events as Server-Sent Events, sent as they are committed.

One ``LISTEN spindle_events`` connection per process (started with the first stream) wakes the
streams of the cluster a notification names; each stream then reads what is new from the table.
Streams are async, so an open stream holds no thread while it waits, and at most ``READERS`` of
them read at once, so a hundred streams woken together take a few database connections, not one
each (the service's pool and PostgreSQL's connection limit are shared with everything else)."""
import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
from starlette.concurrency import run_in_threadpool

from spindle_common.contracts import SETTLED_STATES, ClusterState
from spindle_common.db import session_factory
from spindle_common.notify import EVENTS, Listener
from spindle_orchestrator import clusters
from spindle_orchestrator.schemas import cluster_view, event_view

T = TypeVar("T")

# Seconds between SSE comments that keep idle proxies from closing the stream.
KEEPALIVE_S = 15.0
# Streams reading the database at the same time (each read holds a pooled connection and a thread).
READERS = 4


class EventHub:
    def __init__(self, database_url: str):
        self.database_url = database_url
        self.sessions = session_factory(database_url)
        self.lock = threading.Lock()
        self.waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self.listener: Listener | None = None
        self.readers: anyio.CapacityLimiter | None = None  # made in the event loop, on first use
        # For shared(): when each cluster with waiters was last notified (monotonic s; a reconnection
        # counts for all), and the last shared read of each (when it began, its answer to come).
        self.notified: dict[str, float] = {}
        self.all_notified = float("-inf")
        self.last_read: dict[tuple[asyncio.AbstractEventLoop, str], tuple[float, asyncio.Future]] = {}

    def _deliver(self, _channel: str, cluster_id: str) -> None:
        with self.lock:
            waiters = list(self.waiters.get(cluster_id, ()))
            if waiters:
                self.notified[cluster_id] = time.monotonic()
        for loop, changed in waiters:
            loop.call_soon_threadsafe(changed.set)

    def _wake_all(self) -> None:  # (re)connected: anything may have been missed
        with self.lock:
            waiters = [w for ws in self.waiters.values() for w in ws]
            self.all_notified = time.monotonic()
        for loop, changed in waiters:
            loop.call_soon_threadsafe(changed.set)

    def _ensure_listening(self) -> None:
        with self.lock:
            if self.listener is None:
                self.listener = Listener(self.database_url, (EVENTS,), self._deliver, self._wake_all,
                                         name="event-listener").start()
        self.listener.connected.wait(5)

    def stop(self) -> None:
        if self.listener is not None:
            self.listener.stop()

    @asynccontextmanager
    async def subscribe(self, cluster_id: str) -> AsyncIterator[asyncio.Event]:
        await run_in_threadpool(self._ensure_listening)
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self.lock:
            self.waiters.setdefault(cluster_id, set()).add(entry)
        try:
            yield entry[1]
        finally:
            with self.lock:
                self.waiters[cluster_id].discard(entry)
                if not self.waiters[cluster_id]:
                    del self.waiters[cluster_id]
                    self.notified.pop(cluster_id, None)
                    for key in [k for k in self.last_read if k[1] == cluster_id]:
                        del self.last_read[key]

    async def reading(self, read: Callable[..., T], *args: Any) -> T:
        if self.readers is None:
            self.readers = anyio.CapacityLimiter(READERS)
        return await anyio.to_thread.run_sync(read, *args, limiter=self.readers)

    async def shared(self, cluster_id: str, read: Callable[[], T], max_age: float) -> T:
        """``read()`` of a cluster its subscribers share: the last one's answer when that read began
        after the cluster's last notification and at most ``max_age`` seconds ago, else a new read.
        (A cluster of N members has N executors waiting on its peer set, all woken by each change.)
        The caller is subscribed to the cluster (``subscribe``)."""
        key = (asyncio.get_running_loop(), cluster_id)
        now = time.monotonic()
        with self.lock:
            since = max(self.notified.get(cluster_id, float("-inf")), self.all_notified, now - max_age)
            last = self.last_read.get(key)
            if last is None or last[0] <= since:  # began before what the caller must see: read anew
                last = (now, asyncio.ensure_future(self.reading(read)))
                self.last_read[key] = last
                last[1].add_done_callback(lambda done: self._forget_failed(key, done))
        return await asyncio.shield(last[1])

    def _forget_failed(self, key: tuple[asyncio.AbstractEventLoop, str], done: asyncio.Future) -> None:
        """A read that failed is not given to later callers: they read again."""
        if done.cancelled() or done.exception() is not None:
            with self.lock:
                if key in self.last_read and self.last_read[key][1] is done:
                    del self.last_read[key]

    async def exists(self, cluster_id: str) -> bool:
        return await self.reading(self._exists, cluster_id)

    def _exists(self, cluster_id: str) -> bool:
        with self.sessions() as session:
            return session.get(clusters.Cluster, cluster_id) is not None

    def _read(self, cluster_id: str, after_seq: int) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The cluster (None if gone) and its events after ``after_seq``; the state is read first,
        so every event up to a settled state is in the same answer."""
        with self.sessions() as session:
            cluster = session.get(clusters.Cluster, cluster_id)
            view = cluster_view(cluster).model_dump(mode="json") if cluster else None
            events = [event_view(e).model_dump(mode="json") for e in clusters.events_after(session, cluster_id,
                                                                                           after_seq)]
        return view, events

    async def stream(self, cluster_id: str, after_seq: int, follow: bool = False) -> AsyncIterator[str]:
        """``event: event`` per new event (id = its seq); a final ``event: end`` with the settled
        cluster — with ``follow``, only once it is DESTROYED (a page that stays open)."""
        async with self.subscribe(cluster_id) as changed:
            while True:
                changed.clear()
                cluster, events = await self.reading(self._read, cluster_id, after_seq)
                for event in events:
                    after_seq = event["seq"]
                    yield sse("event", event, event["seq"])
                ends = {ClusterState.DESTROYED} if follow else SETTLED_STATES
                if cluster is None or ClusterState(cluster["state"]) in ends:
                    yield sse("end", cluster)
                    return
                try:
                    await asyncio.wait_for(changed.wait(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"


def sse(event: str, data: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data)}\n\n"
