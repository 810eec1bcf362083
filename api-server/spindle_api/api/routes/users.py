"""Users and their API tokens: admins create users; everyone can see who they are."""
import re

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import select

from spindle_api.api.deps import AdminUser, CurrentUser, OrchestratorDep, SessionDep
from spindle_api.models import User
from spindle_api.tokens import issue_token
from spindle_common.errors import ApiError

router = APIRouter(tags=["users"])

USERNAME = re.compile(r"^[a-z][a-z0-9-]{1,30}[a-z0-9]$")


class UserOut(BaseModel):
    username: str
    is_admin: bool


class NewUser(BaseModel):
    username: str = Field(description="lowercase letters, digits and '-', 3–32 characters")
    is_admin: bool = False

    @field_validator("username")
    @classmethod
    def valid_username(cls, value: str) -> str:
        if not USERNAME.match(value):
            raise ValueError("must be 3–32 lowercase letters, digits or '-', starting with a letter")
        return value


class CreatedUser(UserOut):
    token: str = Field(description="the user's first API token; shown only in this response")


@router.get("/me")
def who_am_i(user: CurrentUser) -> UserOut:
    return UserOut(username=user.username, is_admin=user.is_admin)


@router.post("/admin/users", status_code=201)
def create_user(body: NewUser, _: AdminUser, session: SessionDep) -> CreatedUser:
    """Create a user and their first API token (returned once)."""
    if session.scalar(select(User).where(User.username == body.username)):
        raise ApiError(409, "USER_EXISTS", f"user {body.username!r} exists", {"username": body.username})
    user = User(username=body.username, is_admin=body.is_admin)
    session.add(user)
    session.flush()
    token = issue_token(session, user)
    session.commit()
    return CreatedUser(username=user.username, is_admin=user.is_admin, token=token)


@router.delete("/admin/users/{username}", status_code=204)
def delete_user(username: str, admin: AdminUser, session: SessionDep, orchestrator: OrchestratorDep) -> Response:
    """Delete a user and their tokens. Refused for yourself and for a user who still has clusters
    that are not destroyed (delete those first), so no cluster is left without an owner."""
    if username == admin.username:
        raise ApiError(409, "CANNOT_DELETE_SELF", "admins cannot delete themselves", {"username": username})
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r}", {"username": username})
    live = [c["id"] for c in orchestrator.request("GET", "/clusters", params={"owner": username, "page_size": 500})["items"]
            if c["state"] != "DESTROYED"]
    if live:
        raise ApiError(409, "USER_HAS_CLUSTERS", f"{username} still has {len(live)} clusters; delete them first",
                       {"username": username, "clusters": live})
    session.delete(user)
    session.commit()
    return Response(status_code=204)
