"""Fixtures shared by all tests. Integration tests use the platform `deploy/up` started
(the README's test command starts it); they never mock Docker, PostgreSQL or Consul."""
import os
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

REPO = Path(__file__).resolve().parents[1]
STATE_DIR = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))


def pytest_collection_modifyitems(items):
    """Tests marked `disruptive` (they stop and restart the platform) run last."""
    items.sort(key=lambda item: item.get_closest_marker("disruptive") is not None)


def read_env_file(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="session")
def platform_env() -> dict[str, str]:
    """The environment `deploy/up` wrote for the running platform (DB URL, Consul URL, ...)."""
    env_file = STATE_DIR / "spindle.env"
    if not env_file.exists():
        pytest.fail(f"{env_file} is missing: start the platform with ./deploy/up (make test does)")
    return read_env_file(env_file)


@pytest.fixture(scope="session")
def database_url(platform_env) -> str:
    return platform_env["SPINDLE_DATABASE_URL"]


@pytest.fixture(scope="session")
def consul_url(platform_env) -> str:
    return platform_env["SPINDLE_CONSUL_URL"]


@pytest.fixture
def fresh_database(database_url):
    """An empty PostgreSQL database of its own for one test, dropped afterwards."""
    name = f"spindle_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(database_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        from spindle_common.db import get_engine

        get_engine.cache_clear()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
