"""An api-server app on a fresh database (no Consul registration: the lifespan is not entered)."""
import pytest
from fastapi.testclient import TestClient

from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common import migrations
from spindle_common.db import session_factory


@pytest.fixture
def api(fresh_database, consul_url):
    migrations.upgrade("spindle_api", fresh_database)
    app = build_app(Settings(database_url=fresh_database, consul_url=consul_url))
    return TestClient(app)


@pytest.fixture
def make_user(fresh_database):
    """Create a user directly in the database; returns its API token."""

    def make(username: str, is_admin: bool = False) -> str:
        with session_factory(fresh_database)() as session, session.begin():
            user = User(username=username, is_admin=is_admin)
            session.add(user)
            session.flush()
            return issue_token(session, user)

    return make


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
