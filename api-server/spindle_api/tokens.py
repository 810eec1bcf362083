"""API tokens: created random, shown once, stored as SHA-256."""
import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_api.models import ApiToken, User

TOKEN_PREFIX = "spd_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_token(session: Session, user: User) -> str:
    """Create a token for ``user``; the plain token is returned once and never stored."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, token_hash=hash_token(token), prefix=token[:10]))
    return token


def user_for_token(session: Session, token: str) -> User | None:
    """The user owning an unrevoked token, or None."""
    return session.scalar(
        select(User)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(ApiToken.token_hash == hash_token(token), ApiToken.revoked_at.is_(None))
    )
