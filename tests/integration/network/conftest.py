"""network-service on a fresh database: in-process (TestClient) and served by uvicorn for
parallel clients. Tests use their own pools in 172.31.204.0/22 (the batch tests in 172.31.212.0/23)
and remove their Docker networks."""
import docker
import pytest
from fastapi.testclient import TestClient

from spindle_common.migrations import upgrade
from spindle_network.core.config import Settings
from spindle_network.main import build_app
from tests.support.internal import internal_headers
from tests.support.live_server import serve

TOKEN = "network-test-token"
ADMIN = internal_headers(TOKEN, "test-admin", "admin")
SERVICE = internal_headers(TOKEN, "test-scheduler", "service")
USER = internal_headers(TOKEN, "test-user", "user")


@pytest.fixture
def settings(fresh_database, consul_url) -> Settings:
    upgrade("spindle_network", fresh_database)
    return Settings(database_url=fresh_database, internal_token=TOKEN, consul_url=consul_url)


@pytest.fixture
def api(settings):
    client = TestClient(build_app(settings))
    yield client
    remove_test_pools(client)


@pytest.fixture
def live_url(settings, api):
    with serve(build_app(settings)) as url:
        yield url


def remove_test_pools(client: TestClient) -> None:
    """Remove the Docker networks of the test's pools (the fresh database goes away by itself)."""
    docker_client = docker.from_env()
    for pool in client.get("/pools", headers=ADMIN).json():
        try:
            network = docker_client.networks.get(pool["docker_network"])
        except docker.errors.NotFound:
            continue
        network.reload()
        for container in network.containers:
            network.disconnect(container, force=True)
        network.remove()
    docker_client.close()
