"""An api-server app on a fresh database (no Consul registration: the lifespan is not entered),
in front of a real orchestrator API served on loopback from the same database (its worker is not
running, so launched clusters stay where the test puts them)."""
import pytest
from fastapi.testclient import TestClient

from spindle_api.core.config import Settings
from spindle_api.main import build_app
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_orchestrator.core.config import Settings as OrchestratorSettings
from spindle_orchestrator.main import build_app as build_orchestrator
from tests.support.live_server import serve


@pytest.fixture
def internal_token(platform_env) -> str:
    """The running platform's token: the scheduler (placement dry-runs) is the platform's own."""
    return platform_env["SPINDLE_INTERNAL_TOKEN"]


@pytest.fixture
def state_dir(tmp_path):
    """The services' state folder: none of the platform's product images is being built here
    (``images/`` empty) unless a test writes the builder's state files."""
    (tmp_path / "state" / "images").mkdir(parents=True)
    return tmp_path / "state"


@pytest.fixture
def orchestrator_url(fresh_database, internal_token, state_dir):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    with serve(build_orchestrator(OrchestratorSettings(database_url=fresh_database, internal_token=internal_token,
                                                       state_dir=state_dir))) as url:
        yield url


@pytest.fixture
def api(fresh_database, consul_url, orchestrator_url, internal_token, state_dir):
    migrations.upgrade("spindle_api", fresh_database)
    app = build_app(Settings(database_url=fresh_database, consul_url=consul_url, orchestrator_url=orchestrator_url,
                             internal_token=internal_token, state_dir=state_dir))
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
