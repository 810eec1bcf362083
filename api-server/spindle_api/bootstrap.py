"""Create the first admin user and print its API token once (run by ``deploy/up``).
``--rotate-token`` gives an existing admin a new token (printed) and revokes its old ones: the
way back in when an admin's token is lost (or expired: it works for SPINDLE_TOKEN_LIFETIME_DAYS, 30)."""
import argparse
import sys
from datetime import timedelta

from sqlalchemy import delete, select

from spindle_api.core.config import Settings
from spindle_api.models import ApiToken, User
from spindle_api.tokens import issue_token
from spindle_common.db import session_factory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--username", default="admin")
    parser.add_argument("--rotate-token", action="store_true",
                        help="new token for an existing admin; old ones stop working")
    args = parser.parse_args()
    settings = Settings()
    with session_factory(settings.database_url)() as session, session.begin():
        user = session.scalar(select(User).where(User.username == args.username))
        if user is not None and not args.rotate_token:
            print(f"admin user {args.username!r} exists; its token was printed when it was created "
                  "(--rotate-token issues a new one)", file=sys.stderr)
            return
        if user is None:
            user = User(username=args.username, is_admin=True)
            session.add(user)
            session.flush()
        elif not user.is_admin:
            print(f"{args.username!r} is not an admin", file=sys.stderr)
            sys.exit(1)
        else:
            session.execute(delete(ApiToken).where(ApiToken.user_id == user.id))
        token = issue_token(session, user, timedelta(days=settings.token_lifetime_days))
    print(token)
