"""Users of the running platform's api-server, made for one test and removed after it."""
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import delete

from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_client.client import SpindleClient
from spindle_common.db import session_factory

API_URL = "http://127.0.0.1:8080"


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
