"""Users of the running platform's api-server, made for one test and removed after it."""
import os
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


# Every user a test makes on the live platform is written down here until the test removes it again, one
# file per user holding the pid and start time of the process that made it (web-ui/e2e/platform.ts writes
# the browser tests' users the same way). A test process killed before its clean-up (a session's end, a CI
# run's time limit) leaves its users and their clusters behind; deploy/up brings those clusters back, and
# they hold cpus, disks and IPs the next run counts on. ``sweep_stale_users`` removes the users of
# processes that are gone, then their clusters: only what tests made, never anyone else's.
LEDGER = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "test-users"


def process_key(pid: int) -> str | None:
    """``"<pid> <start time>"`` of a live process (its start time in clock ticks after boot, field 22 of
    /proc/PID/stat: a pid reused by a later process has another), None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return f"{pid} {stat.rsplit(')', 1)[1].split()[19]}"


def remember_user(username: str) -> None:
    LEDGER.mkdir(parents=True, exist_ok=True)
    (LEDGER / username).write_text(process_key(os.getpid()) or "")


def forget_user(username: str) -> None:
    (LEDGER / username).unlink(missing_ok=True)


def stale_users(ledger: Path) -> list[str]:
    """The users in ``ledger`` whose process is gone (or whose pid is another process's now)."""
    stale = []
    for entry in sorted(ledger.glob("*")) if ledger.is_dir() else []:
        try:
            key = entry.read_text().strip()
        except FileNotFoundError:
            continue  # another process's sweep removed it
        pid = key.split(" ", 1)[0]
        if not pid.isdigit() or process_key(int(pid)) != key:
            stale.append(entry.name)
    return stale


def sweep_stale_users(database_url: str, wait_s: float = 300) -> list[str]:
    """Remove every user in the ledger whose process is gone, then destroy every cluster whose owner is
    gone (waiting up to ``wait_s``); the users removed."""
    stale = stale_users(LEDGER)
    if stale:
        with session_factory(database_url)() as session, session.begin():
            session.execute(delete(User).where(User.username.in_(stale)))  # tokens cascade
        for username in stale:
            forget_user(username)
    destroy_orphaned_clusters(database_url, wait_s=wait_s)
    return stale


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
    remember_user(username)
    client = SpindleClient(API_URL, token, timeout=60)
    client.username, client.token = username, token
    try:
        yield client
    finally:
        client.close()
        with sessions() as session, session.begin():
            session.execute(delete(User).where(User.username == username))  # tokens cascade
        forget_user(username)
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


if __name__ == "__main__":
    # scripts/test-all, before the browser tests: what a killed earlier run left is gone first.
    from tests.conftest import STATE_DIR, read_env_file
    swept = sweep_stale_users(read_env_file(STATE_DIR / "spindle.env")["SPINDLE_DATABASE_URL"])
    print(f"removed {len(swept)} users an earlier, killed test run left: {' '.join(swept) or '-'}", file=sys.stderr)
