"""When a writer's writes were sent and acknowledged, and what that says about a loss under it: how
soon after ``since`` (a kill) a write sent after it was acknowledged, and the longest time without any
acknowledgement. The Kafka, Cassandra and HDFS writers (``kafka_records``, ``cassandra_records``,
``hdfs_records``) keep ``sent_at``/``acked_at`` (key → ``time.monotonic()``) and answer with these."""
from collections.abc import Hashable, Iterable, Mapping


def serving_again_after(sent_at: Mapping[Hashable, float], acked_at: Mapping[Hashable, float],
                        since: float) -> float | None:
    """Seconds from ``since`` to the first acknowledgement of a write sent at or after it (None: none yet)."""
    times = [at for key, at in acked_at.items() if sent_at[key] >= since]
    return min(times) - since if times else None


def longest_pause(acked: Iterable[float], since: float) -> float:
    """The longest time without any acknowledgement from ``since`` to the last one."""
    times = sorted([since] + [at for at in acked if at >= since])
    return max(b - a for a, b in zip(times, times[1:], strict=False)) if len(times) > 1 else 0.0
