"""RecordIO framing of Mesos event streams: ``<length in bytes>\\n<JSON>``."""
import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any


def record(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return str(len(body)).encode() + b"\n" + body


def parse(stream: bytes) -> list[dict[str, Any]]:
    """Every complete record in ``stream`` (for tests and tools)."""
    records, rest = [], stream
    while rest:
        length, _, rest = rest.partition(b"\n")
        size = int(length)
        records.append(json.loads(rest[:size]))
        rest = rest[size:]
    return records


class RecordReader:
    """Incremental parsing of a stream that arrives in arbitrary chunks (the agent reads the
    master's event stream this way)."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        self.buffer += chunk
        records = []
        while b"\n" in self.buffer:
            length, _, rest = self.buffer.partition(b"\n")
            size = int(length)
            if len(rest) < size:
                break
            records.append(json.loads(rest[:size]))
            self.buffer = rest[size:]
        return records


async def event_stream(queue: asyncio.Queue, heartbeat_s: float, on_close: Callable[[], None]) -> AsyncIterator[bytes]:
    """The RecordIO stream of one subscriber (framework, executor or agent): what is put on
    ``queue``, HEARTBEAT events while idle; ends on ``None``. ``on_close`` runs however it ends
    (the peer went away, or a newer subscription replaced this one)."""
    try:
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), heartbeat_s)
            except TimeoutError:
                event = {"type": "HEARTBEAT"}
            if event is None:
                return
            yield record(event)
    finally:
        on_close()
