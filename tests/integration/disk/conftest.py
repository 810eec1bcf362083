"""Fixtures for disk-service integration tests: a migrated fresh database, the app in-process
(TestClient, no lifespan so nothing registers in Consul), a live uvicorn server on a free port for
tests that need real parallel HTTP requests."""
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from spindle_common.migrations import upgrade
from spindle_disk.core.config import Settings
from spindle_disk.main import build_app
from tests.support.live_server import serve

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


@pytest.fixture
def live_url(settings) -> str:
    """disk-service's real code served by uvicorn on loopback, for truly parallel HTTP clients."""
    app = build_app(settings)
    with serve(app) as url:
        yield url
    app.state.wiper.shutdown()
