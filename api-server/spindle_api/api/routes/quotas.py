"""Quotas: your usage against your quota (``GET /me/quota``); admins see and set any user's
(``/admin/users/{username}/quota``) and list the quotas they set (``/admin/quotas``). The
orchestrator keeps and enforces them, keyed by the user's stable id (``actor_of``): a launch, plan
or job over a limit is 403 ``QUOTA_EXCEEDED`` naming it."""
from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import Field
from sqlalchemy import select

from spindle_api.api.deps import AdminUser, CurrentUser, OrchestratorDep, SessionDep, user_named
from spindle_api.api.params import USERNAME_PATTERN, segment
from spindle_api.models import User
from spindle_api.schemas import upstream_list, upstream_model
from spindle_api.upstream import actor_of
from spindle_common.contracts import Model, QuotaAmounts, QuotaUpdate, QuotaView
from spindle_common.errors import error_responses

router = APIRouter(tags=["quotas"])

QuotaUsername = Annotated[str, Path(pattern=USERNAME_PATTERN, description="the user whose quota", examples=["alice"])]

NO_USER = "no such user (USER_NOT_FOUND)"
BAD_LIMITS = "a limit is not a number from 0 to 2147483647, or names an unknown resource or disk class " \
             "(VALIDATION_FAILED names each)"


class Quota(Model):
    """A user's limits and what their clusters and jobs hold now: clusters not destroyed (waiting
    ones too), their members' cpus, memory (MiB), dedicated disks per class, and floating IPs (one
    per member and per unfinished job driver)."""

    username: str
    limits: QuotaAmounts
    usage: QuotaAmounts
    defaults: list[str] = Field(description="the limits that are the platform's defaults (not set for this user)")


def _quota(username: str, view: QuotaView) -> Quota:
    return Quota(username=username, limits=view.limits, usage=view.usage, defaults=view.defaults)


@router.get("/me/quota", responses=error_responses(401, 502, 503))
def my_quota(user: CurrentUser, orchestrator: OrchestratorDep) -> Quota:
    """Your usage against your quota."""
    return _quota(user.username, upstream_model(QuotaView, orchestrator.request(
        "GET", f"/quotas/{segment(actor_of(user))}")))


@router.get("/admin/quotas", responses=error_responses(401, 403, 502, 503))
def list_quotas(_: AdminUser, session: SessionDep, orchestrator: OrchestratorDep) -> list[Quota]:
    """Every quota an admin set, with its usage (users on the defaults are not listed)."""
    names = {actor_of(u): u.username for u in session.scalars(select(User))}
    session.rollback()
    views = upstream_list(QuotaView, orchestrator.request("GET", "/quotas"))
    return [_quota(names[v.owner], v) for v in views if v.owner in names]  # a deleted user's: not shown


@router.get("/admin/users/{username}/quota",
            responses=error_responses(401, 403, 404, 422, 502, 503, descriptions={404: NO_USER}))
def get_quota(username: QuotaUsername, _: AdminUser, session: SessionDep, orchestrator: OrchestratorDep) -> Quota:
    user = user_named(session, username)
    return _quota(username, upstream_model(QuotaView, orchestrator.request(
        "GET", f"/quotas/{segment(actor_of(user))}")))


@router.put("/admin/users/{username}/quota",
            responses=error_responses(400, 401, 403, 404, 413, 422, 502, 503,
                                      descriptions={404: NO_USER, 422: BAD_LIMITS}))
def set_quota(username: QuotaUsername, body: QuotaUpdate, _: AdminUser, session: SessionDep,
              orchestrator: OrchestratorDep) -> Quota:
    """Set the user's whole quota: a limit left out (or null) is the platform's default, a disk class
    left out of ``disks`` too. A limit lowered below the usage takes nothing away; only what would
    need more of it is refused."""
    user = user_named(session, username)
    return _quota(username, upstream_model(QuotaView, orchestrator.request(
        "PUT", f"/quotas/{segment(actor_of(user))}", json=body.model_dump(mode="json", exclude_none=True))))
