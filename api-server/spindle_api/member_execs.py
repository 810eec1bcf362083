"""The record of commands run in members (``member_execs``): each written before it runs and
completed when its output ends; read by the cluster's owner (one cluster) and by admins (all)."""
from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_api.models import MemberExec
from spindle_api.tokens import utc_now


def record_start(session: Session, username: str, cluster_id: str, cluster_owner: str, member_id: str,
                 argv: list[str]) -> int:
    """Record that ``username`` runs ``argv`` in the member now (committed); the record's id."""
    row = MemberExec(started_at=utc_now(), username=username, cluster_id=cluster_id, cluster_owner=cluster_owner,
                     member_id=member_id, argv=argv, timed_out=False)
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


def recorded_execs(session: Session, limit: int, cluster_id: str | None = None, username: str | None = None,
                   cluster_owner: str | None = None) -> list[MemberExec]:
    """The newest ``limit`` records, of one cluster, caller or cluster owner when given."""
    query = select(MemberExec).order_by(MemberExec.id.desc()).limit(limit)
    for column, value in ((MemberExec.cluster_id, cluster_id), (MemberExec.username, username),
                          (MemberExec.cluster_owner, cluster_owner)):
        if value is not None:
            query = query.where(column == value)
    return list(session.scalars(query))
