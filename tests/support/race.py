"""Truly parallel HTTP requests: N threads, each with its own connection, released together."""
import threading
from collections.abc import Callable

import httpx


def race(url: str, clients: int, call: Callable[[httpx.Client, int], httpx.Response]) -> list[httpx.Response]:
    """``call(client, i)`` from ``clients`` threads at once (a barrier releases them together)."""
    barrier = threading.Barrier(clients)
    responses: list[httpx.Response | None] = [None] * clients

    def one(i: int) -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            barrier.wait()
            responses[i] = call(client, i)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return responses  # type: ignore[return-value]
