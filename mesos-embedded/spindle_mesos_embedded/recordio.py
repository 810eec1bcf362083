"""RecordIO framing of Mesos event streams: ``<length in bytes>\\n<JSON>``."""
import json
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
