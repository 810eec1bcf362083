"""Fixtures for disk-service integration tests: a migrated fresh database, the app in-process
(TestClient, no lifespan so nothing registers in Consul), a live uvicorn server on a free port for
tests that need real parallel HTTP requests."""
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi.testclient import TestClient

from spindle_common.migrations import upgrade
from spindle_disk.core.config import Settings
from spindle_disk.main import build_app

# The tests of this folder share plain helpers (headers, inventory builders) from disk_helpers.py.
sys.path.insert(0, str(Path(__file__).parent))
from disk_helpers import TOKEN  # noqa: E402


@pytest.fixture
def disk_db(fresh_database) -> str:
    upgrade("spindle_disk", fresh_database)
    return fresh_database


@pytest.fixture
def settings(disk_db) -> Settings:
    return Settings(database_url=disk_db, internal_token=TOKEN)


@pytest.fixture
def api(settings) -> TestClient:
    app = build_app(settings)
    yield TestClient(app)
    app.state.wiper.shutdown()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def live_url(settings) -> str:
    """disk-service's real code served by uvicorn on loopback, for truly parallel HTTP clients."""
    app = build_app(settings)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health").status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.05)
    yield url
    server.should_exit = True
    thread.join(10)
    app.state.wiper.shutdown()
