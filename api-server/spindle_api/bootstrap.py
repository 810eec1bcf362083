"""Create the first admin user and print its API token once (run by ``deploy/up``)."""
import argparse
import sys

from sqlalchemy import select

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common.db import session_factory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--username", default="admin")
    args = parser.parse_args()
    with session_factory(Settings().database_url)() as session, session.begin():
        if session.scalar(select(User).where(User.username == args.username)):
            print(f"admin user {args.username!r} exists; its token was printed when it was created", file=sys.stderr)
            return
        user = User(username=args.username, is_admin=True)
        session.add(user)
        session.flush()
        token = issue_token(session, user)
    print(token)
