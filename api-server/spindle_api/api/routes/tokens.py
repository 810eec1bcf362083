"""API tokens: everyone lists, creates and revokes their own; admins list and revoke anyone's.
A token is shown once, when it is created; it works until it expires or is revoked."""
from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select

from spindle_api.api.deps import AdminUser, CurrentUser, SessionDep, SettingsDep
from spindle_api.api.params import INT32_MAX, USERNAME_PATTERN
from spindle_api.models import ApiToken, User
from spindle_api.tokens import new_token, revoke, tokens_of
from spindle_common.contracts import Timestamp
from spindle_common.errors import ApiError, error_responses

router = APIRouter(tags=["tokens"])

TokensUser = Annotated[str, Path(pattern=USERNAME_PATTERN, description="whose tokens", examples=["alice"])]
TokenId = Annotated[int, Path(ge=1, le=INT32_MAX, description="a token's id (GET /me/tokens)", examples=[1])]
NOT_YOURS = "no token with this id among the user's (TOKEN_NOT_FOUND): another user's token is a 404 too"
# Ten years, in seconds: above any lifetime an installation would configure, below any overflow.
MAX_EXPIRES_IN_S = 10 * 365 * 86400


class TokenOut(BaseModel):
    id: int
    prefix: str = Field(description="the token's first characters, to tell tokens apart")
    created_at: Timestamp
    expires_at: Timestamp
    revoked_at: Timestamp | None


class CreatedToken(TokenOut):
    token: str = Field(description="the API token; shown only in this response")


class NewToken(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expires_in_s: int | None = Field(default=None, ge=60, le=MAX_EXPIRES_IN_S,
                                     description="seconds the token works (default and at most: the platform's "
                                                 "token lifetime, SPINDLE_TOKEN_LIFETIME_DAYS, 30 days)")


def token_out(row: ApiToken) -> TokenOut:
    return TokenOut(id=row.id, prefix=row.prefix, created_at=row.created_at, expires_at=row.expires_at,
                    revoked_at=row.revoked_at)


def _user_named(session: SessionDep, username: str) -> User:
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r}", {"username": username})
    return user


@router.get("/me/tokens", responses=error_responses(401))
def my_tokens(user: CurrentUser, session: SessionDep) -> list[TokenOut]:
    """Your tokens, newest first, revoked and expired ones too (never the tokens themselves)."""
    return [token_out(t) for t in tokens_of(session, user.id)]


@router.post("/me/tokens", status_code=201, responses=error_responses(400, 401, 413, 422, descriptions={
    422: "the body is not valid, or asks for a longer life than the platform gives a token "
         "(VALIDATION_FAILED, TOKEN_LIFETIME_TOO_LONG)"}))
def create_token(user: CurrentUser, session: SessionDep, settings: SettingsDep,
                 body: NewToken | None = None) -> CreatedToken:
    """A new API token for you (returned once), working for the platform's token lifetime or the
    shorter ``expires_in_s``."""
    limit = timedelta(days=settings.token_lifetime_days)
    asked = body.expires_in_s if body else None
    if asked is not None and timedelta(seconds=asked) > limit:
        raise ApiError(422, "TOKEN_LIFETIME_TOO_LONG", f"a token works at most {settings.token_lifetime_days} days",
                       {"expires_in_s": asked, "max_expires_in_s": int(limit.total_seconds())})
    owner = session.get(User, user.id)
    if owner is None:  # deleted while this request ran
        raise ApiError(401, "UNAUTHENTICATED", "the API token is unknown")
    token, row = new_token(session, owner, timedelta(seconds=asked) if asked is not None else limit)
    out = CreatedToken(**token_out(row).model_dump(), token=token)
    session.commit()
    return out


@router.delete("/me/tokens/{token_id}", status_code=204, response_class=Response,
               responses=error_responses(401, 404, 422, descriptions={404: NOT_YOURS}))
def revoke_my_token(token_id: TokenId, user: CurrentUser, session: SessionDep) -> Response:
    """Revoke one of your tokens: it is refused from the next request on (revoking twice is fine)."""
    revoke(session, user.id, token_id)
    session.commit()
    return Response(status_code=204)


@router.get("/admin/users/{username}/tokens", responses=error_responses(401, 403, 404, 422, descriptions={
    404: "no such user (USER_NOT_FOUND)"}))
def user_tokens(username: TokensUser, _: AdminUser, session: SessionDep) -> list[TokenOut]:
    """The user's tokens, newest first (never the tokens themselves)."""
    return [token_out(t) for t in tokens_of(session, _user_named(session, username).id)]


@router.delete("/admin/users/{username}/tokens/{token_id}", status_code=204, response_class=Response,
               responses=error_responses(401, 403, 404, 422, descriptions={
                   404: "no such user (USER_NOT_FOUND), or no such token of theirs (TOKEN_NOT_FOUND)"}))
def revoke_user_token(username: TokensUser, token_id: TokenId, _: AdminUser, session: SessionDep) -> Response:
    """Revoke any user's token (revoking twice is fine)."""
    revoke(session, _user_named(session, username).id, token_id)
    session.commit()
    return Response(status_code=204)
