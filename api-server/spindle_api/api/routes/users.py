"""Users and their API tokens: admins create users; everyone can see who they are."""
import re
from datetime import timedelta

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import select

from spindle_api.api.deps import AdminUser, CurrentUser, OrchestratorDep, SessionDep, SettingsDep
from spindle_api.api.params import USERNAME_PATTERN, UserToDelete
from spindle_api.api.routes.clusters import cluster_page
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_api.upstream import actor_of
from spindle_common.contracts import ClusterState
from spindle_common.errors import ApiError, error_responses

router = APIRouter(tags=["users"])

USERNAME = re.compile(USERNAME_PATTERN)


class UserOut(BaseModel):
    username: str
    is_admin: bool


class NewUser(BaseModel):
    username: str = Field(description="lowercase letters, digits and '-', 3–32 characters, starting with a letter",
                          json_schema_extra={"pattern": USERNAME_PATTERN}, examples=["alice"])
    is_admin: bool = False

    @field_validator("username")
    @classmethod
    def valid_username(cls, value: str) -> str:
        if not USERNAME.fullmatch(value):
            raise ValueError("must be 3–32 lowercase letters, digits or '-', starting with a letter")
        return value


class CreatedUser(UserOut):
    token: str = Field(description="the user's first API token; shown only in this response (it works for the "
                                   "platform's token lifetime: see GET /me/tokens)")


@router.get("/me", responses=error_responses(401))
def who_am_i(user: CurrentUser) -> UserOut:
    return UserOut(username=user.username, is_admin=user.is_admin)


@router.post("/admin/users", status_code=201,
             responses=error_responses(400, 401, 403, 409, 413, 422,
                                       descriptions={409: "the user exists (USER_EXISTS)"}))
def create_user(body: NewUser, _: AdminUser, session: SessionDep, settings: SettingsDep) -> CreatedUser:
    """Create a user and their first API token (returned once)."""
    if session.scalar(select(User).where(User.username == body.username)):
        raise ApiError(409, "USER_EXISTS", f"user {body.username!r} exists", {"username": body.username})
    user = User(username=body.username, is_admin=body.is_admin)
    session.add(user)
    session.flush()
    token = issue_token(session, user, timedelta(days=settings.token_lifetime_days))
    session.commit()
    return CreatedUser(username=user.username, is_admin=user.is_admin, token=token)


@router.delete("/admin/users/{username}", status_code=204, response_class=Response,
               responses=error_responses(401, 403, 404, 409, 422, 502, 503, descriptions={
                   404: "no such user (USER_NOT_FOUND)",
                   409: "the user still has clusters that are not destroyed (USER_HAS_CLUSTERS), or is the caller "
                        "(CANNOT_DELETE_SELF)"}))
def delete_user(username: UserToDelete, admin: AdminUser, session: SessionDep,
                orchestrator: OrchestratorDep) -> Response:
    """Delete a user and their tokens. Refused for yourself and for a user who still has clusters
    that are not destroyed (delete those first), so no cluster is left without an owner."""
    if username == admin.username:
        raise ApiError(409, "CANNOT_DELETE_SELF", "admins cannot delete themselves", {"username": username})
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r}", {"username": username})
    live, token = [], None
    while True:  # every page: a user with many destroyed clusters may have live ones further on
        page = cluster_page(orchestrator, None, None, None, 500, token, owner_id=actor_of(user))
        live += [c.id for c in page.items if c.state != ClusterState.DESTROYED]
        token = page.next_page_token
        if not token:
            break
    if live:
        raise ApiError(409, "USER_HAS_CLUSTERS", f"{username} still has {len(live)} clusters; delete them first",
                       {"username": username, "clusters": live})
    session.delete(user)
    session.commit()
    return Response(status_code=204)
