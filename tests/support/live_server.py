"""A service's real app served by uvicorn on a free loopback port, for tests that need truly
parallel HTTP clients (TestClient serialises requests)."""
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ok(url: str, timeout: float = 20.0) -> None:
    """Poll ``url`` until it answers 2xx; raise if it does not within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2).is_success:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{url} did not answer within {timeout:.0f} s")
        time.sleep(0.05)


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` without its lifespan (nothing registers in Consul); yields its base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    wait_ok(f"{url}/health")
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(10)
        # The orchestrator's event stream listens for NOTIFY once a stream was followed: stopped with
        # the app (a test's database is dropped next; its listener would retry for the rest of the run).
        hub = getattr(app.state, "event_hub", None)
        if hub is not None:
            hub.stop()
