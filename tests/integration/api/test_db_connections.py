"""The api-server gives its database connection back right after authenticating a request, and the
route never takes one again by looking at the user: a hundred requests waiting on other services
(an SSE stream's first call to the orchestrator, say) must not hold the pool's thirty connections.
(Before, the rollback expired the user, and the route's first ``user.username`` checked a
connection out again until the request ended: under load, requests waited 30 s for one and got 503.)"""
from fastapi.security import HTTPAuthorizationCredentials

from spindle_api.api.deps import current_user
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common import migrations
from spindle_common.db import get_engine, session_factory


def test_the_authenticated_user_is_read_without_holding_a_connection(fresh_database):
    migrations.upgrade("spindle_api", fresh_database)
    sessions = session_factory(fresh_database)
    with sessions.begin() as session:
        alice = User(username="alice", is_admin=False)
        session.add(alice)
        session.flush()
        token = issue_token(session, alice)
    pool = get_engine(fresh_database).pool
    with sessions() as session:
        user = current_user(session, HTTPAuthorizationCredentials(scheme="Bearer", credentials=token))
        assert pool.checkedout() == 0
        assert (user.username, user.is_admin) == ("alice", False)  # what routes read of the user
        assert pool.checkedout() == 0, "reading the user took a connection again"
