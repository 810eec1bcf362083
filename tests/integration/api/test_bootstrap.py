"""``spindle-bootstrap-admin``: creates the first admin once and prints its token once;
``--rotate-token`` gives an existing admin a new token and revokes the old ones."""
import os
import subprocess

from spindle_api.tokens import user_for_token
from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_common.errors import ApiError
from tests.conftest import REPO


def bootstrap(database_url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([REPO / ".venv/bin/spindle-bootstrap-admin", "--username", "boss", *args],
                          env={**os.environ, "SPINDLE_DATABASE_URL": database_url}, capture_output=True, text=True)


def owner(database_url: str, token: str):
    """The token's user's name; None when the token signs nobody in (unknown, revoked, expired)."""
    with session_factory(database_url)() as session:
        try:
            return user_for_token(session, token).username
        except ApiError:
            return None


def test_first_admin_once_then_a_rotated_token(fresh_database):
    migrations.upgrade("spindle_api", fresh_database)
    first = bootstrap(fresh_database)
    token = first.stdout.strip()
    assert first.returncode == 0 and owner(fresh_database, token) == "boss"

    again = bootstrap(fresh_database)
    assert again.returncode == 0 and again.stdout == "" and "exists" in again.stderr

    rotated = bootstrap(fresh_database, "--rotate-token")
    new_token = rotated.stdout.strip()
    assert rotated.returncode == 0 and new_token != token
    assert owner(fresh_database, new_token) == "boss" and owner(fresh_database, token) is None
