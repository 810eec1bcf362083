"""The record of commands run in members and terminal sessions opened in them (``member_execs``):
each written before it runs and completed when its output ends; read by the cluster's owner (one
cluster) and by admins (all)."""
import logging

import anyio
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from spindle_api.models import MemberExec
from spindle_api.tokens import utc_now
from spindle_common.db import session_factory

log = logging.getLogger("spindle.exec")

# What a terminal session is recorded as running (its kind says it is one).
TERMINAL_ARGV = ["<terminal>"]


def record_start(session: Session, username: str, cluster_id: str, cluster_owner: str, member_id: str,
                 argv: list[str], kind: str = "exec") -> int:
    """Record that ``username`` runs ``argv`` in the member now (committed); the record's id."""
    row = MemberExec(started_at=utc_now(), username=username, cluster_id=cluster_id, cluster_owner=cluster_owner,
                     member_id=member_id, argv=argv, timed_out=False, kind=kind)
    session.add(row)
    session.commit()
    return row.id


def record_end(session: Session, exec_id: int, exit_code: int | None, timed_out: bool = False,
               error: str | None = None) -> None:
    """Complete the record: when it ended and how (``error``: a code saying why there is no exit code)."""
    row = session.get(MemberExec, exec_id)
    if row is None:
        return
    row.finished_at, row.exit_code, row.timed_out, row.error = utc_now(), exit_code, timed_out, error
    session.commit()


async def finish(database_url: str, exec_id: int, exit_code: int | None, timed_out: bool = False,
                 error: str | None = None) -> None:
    """``record_end`` in a session of its own (the request's is closed while a stream runs), from the
    event loop; a database that fails is logged (the stream has ended either way)."""
    def write() -> None:
        with session_factory(database_url)() as session:
            record_end(session, exec_id, exit_code, timed_out, error)

    try:
        await anyio.to_thread.run_sync(write)
    except SQLAlchemyError as exc:
        log.warning("exec record %s not completed: %s", exec_id, exc)


def recorded_execs(session: Session, limit: int, cluster_id: str | None = None, username: str | None = None,
                   cluster_owner: str | None = None) -> list[MemberExec]:
    """The newest ``limit`` records, of one cluster, caller or cluster owner when given."""
    query = select(MemberExec).order_by(MemberExec.id.desc()).limit(limit)
    for column, value in ((MemberExec.cluster_id, cluster_id), (MemberExec.username, username),
                          (MemberExec.cluster_owner, cluster_owner)):
        if value is not None:
            query = query.where(column == value)
    return list(session.scalars(query))
