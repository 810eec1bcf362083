"""Users of the running platform's api-server, made for one test and removed after it."""
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from sqlalchemy import delete, text

from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_client.client import SpindleClient
from spindle_common.db import session_factory

API_URL = "http://127.0.0.1:8080"
ORCHESTRATOR_URL = "http://127.0.0.1:8081"

# Clusters not destroyed whose owner (``u<users.id>``) is no user any more: what a test run killed
# before its clean-up leaves (the API refuses to delete a user who has clusters; tests remove theirs
# straight from the database).
ORPHANS = text("SELECT c.id FROM orchestrator.clusters c WHERE c.state <> 'DESTROYED' AND NOT EXISTS "
               "(SELECT 1 FROM api.users u WHERE 'u' || u.id = c.owner_id)")


def cluster_secret(database_url: str, cluster_id: str) -> str:
    """A cluster's data-plane secret, as its members and jobs get it (what a test on this machine
    logs in to a product with; users never see it in a view)."""
    with session_factory(database_url)() as session:
        return session.execute(text("SELECT secret FROM orchestrator.clusters WHERE id = :id"),
                               {"id": cluster_id}).scalar_one()


@contextmanager
def live_user(database_url: str, prefix: str = "t", is_admin: bool = False) -> Iterator[SpindleClient]:
    """A fresh user (name ``<prefix>-<hex>``) with a token, as a client of the live public API."""
    username = f"{prefix}-{uuid.uuid4().hex[:8]}"
    sessions = session_factory(database_url)
    with sessions() as session, session.begin():
        user = User(username=username, is_admin=is_admin)
        session.add(user)
        session.flush()
        token = issue_token(session, user)
    client = SpindleClient(API_URL, token, timeout=60)
    client.username, client.token = username, token
    try:
        yield client
    finally:
        client.close()
        with sessions() as session, session.begin():
            session.execute(delete(User).where(User.username == username))  # tokens cascade
        destroy_orphaned_clusters(database_url, wait_s=0)  # what the test left running, if anything


def destroy_orphaned_clusters(database_url: str, wait_s: float = 300) -> list[str]:
    """Ask the orchestrator (as the platform's admin) to destroy every cluster whose owner is gone, then
    wait up to ``wait_s`` for them to be DESTROYED; their ids."""
    from tests.conftest import STATE_DIR, read_env_file
    from tests.support.internal import internal_headers

    sessions = session_factory(database_url)
    with sessions() as session:
        orphans = list(session.scalars(ORPHANS))
    if not orphans:
        return []
    headers = internal_headers(read_env_file(STATE_DIR / "spindle.env")["SPINDLE_INTERNAL_TOKEN"], "tests", "admin")
    for cluster_id in orphans:
        httpx.delete(f"{ORCHESTRATOR_URL}/clusters/{cluster_id}", headers=headers, timeout=30)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with sessions() as session:
            if not set(orphans) & set(session.scalars(ORPHANS)):
                break
        time.sleep(2)
    return orphans
