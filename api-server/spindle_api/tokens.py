"""API tokens: created random, shown once, stored as SHA-256; each works until it expires or is
revoked (``refusal`` says which, for a clear 401)."""
import hashlib
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_api.models import ApiToken, User
from spindle_common.errors import ApiError

TOKEN_PREFIX = "spd_"
DEFAULT_LIFETIME = timedelta(days=30)


def utc_now() -> datetime:
    """Now, as the database keeps timestamps: naive, in UTC."""
    return datetime.now(UTC).replace(tzinfo=None)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token(session: Session, user: User, lifetime: timedelta = DEFAULT_LIFETIME) -> tuple[str, ApiToken]:
    """A token for ``user`` working for ``lifetime``: the plain token (returned once, never stored)
    and its row (flushed, so it has its id)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(user_id=user.id, token_hash=hash_token(token), prefix=token[:10], expires_at=utc_now() + lifetime)
    session.add(row)
    session.flush()
    return token, row


def issue_token(session: Session, user: User, lifetime: timedelta = DEFAULT_LIFETIME) -> str:
    """Create a token for ``user``; the plain token is returned once and never stored."""
    return new_token(session, user, lifetime)[0]


def refusal(row: ApiToken | None, now: datetime) -> ApiError | None:
    """Why a presented token does not sign anyone in (unknown, revoked, expired), or None when it does."""
    if row is None:
        return ApiError(401, "UNAUTHENTICATED", "the API token is unknown")
    if row.revoked_at is not None:
        return ApiError(401, "TOKEN_REVOKED", f"the API token {row.prefix}… was revoked; use another one",
                        {"token_id": row.id})
    if row.expires_at <= now:
        return ApiError(401, "TOKEN_EXPIRED", f"the API token {row.prefix}… expired at "
                        f"{row.expires_at.isoformat(timespec='seconds')}Z; create a new one (POST /me/tokens)",
                        {"token_id": row.id})
    return None


def user_for_token(session: Session, token: str) -> User:
    """The user owning ``token`` if it is known, not revoked and not expired; else the 401 saying which."""
    found = session.execute(select(ApiToken, User).join(User, User.id == ApiToken.user_id)
                            .where(ApiToken.token_hash == hash_token(token))).first()
    error = refusal(found[0] if found else None, utc_now())
    if error is not None or found is None:
        raise error or ApiError(401, "UNAUTHENTICATED", "the API token is unknown")
    return found[1]


def tokens_of(session: Session, user_id: int) -> list[ApiToken]:
    """Every token of the user, newest first (revoked and expired ones too)."""
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user_id)
                                .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())))


def revoke(session: Session, user_id: int, token_id: int) -> ApiToken:
    """Revoke the user's token ``token_id`` (already revoked: unchanged); 404 when the user has no such token."""
    row = session.get(ApiToken, token_id)
    if row is None or row.user_id != user_id:
        raise ApiError(404, "TOKEN_NOT_FOUND", f"no token {token_id} of this user", {"token_id": token_id})
    if row.revoked_at is None:
        row.revoked_at = utc_now()
    return row
