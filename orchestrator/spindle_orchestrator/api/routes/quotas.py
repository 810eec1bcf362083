"""Quotas of users (by owner key): see one with its usage, set one (the api-server's admin routes
call these), list those set, and check a launch against one without creating anything (plans)."""
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, Field
from sqlalchemy.orm import Session

from spindle_common.contracts import QuotaUpdate, QuotaView
from spindle_common.errors import error_responses
from spindle_orchestrator import quotas
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Cluster

router = APIRouter(prefix="/quotas", tags=["quotas"])
Owner = Annotated[str, Path(min_length=1, max_length=64)]


class Quotas:
    """What every quota route needs: the defaults, the catalog and whether members get floating IPs."""

    def __init__(self, request: Request):
        settings: Settings = request.app.state.settings
        self.defaults = quotas.defaults_of(settings)
        self.manifest_of = request.app.state.catalog.get
        self.floating_ips = bool(settings.network_pool)

    def view(self, session: Session, owner: str) -> QuotaView:
        return quotas.view(session, owner, self.defaults, self.manifest_of, self.floating_ips)

    def admit_driver(self, session: Session, cluster: Cluster) -> None:
        """A job's driver holds a floating IP: check it against the cluster owner's quota (locked
        until the job is recorded)."""
        if self.floating_ips and cluster.owner_id:
            quotas.admit(session, cluster.owner_id, quotas.Amounts(floating_ips=1), self.defaults, self.manifest_of,
                         self.floating_ips)


QuotasDep = Annotated[Quotas, Depends(Quotas)]


class LaunchCheck(BaseModel):
    product: str = Field(min_length=1, max_length=64)
    version: str = Field(min_length=1, max_length=32)
    options: dict[str, Any] = {}


@router.get("")
def list_quotas(session: SessionDep, _: ServiceCaller, q: QuotasDep) -> list[QuotaView]:
    """Every quota an admin set, with its usage (users on the defaults are not listed)."""
    return [q.view(session, row.owner) for row in quotas.explicit(session)]


@router.get("/{owner}")
def get_quota(owner: Owner, session: SessionDep, _: ServiceCaller, q: QuotasDep) -> QuotaView:
    return q.view(session, owner)


@router.put("/{owner}")
def put_quota(owner: Owner, body: QuotaUpdate, session: SessionDep, _: ServiceCaller, q: QuotasDep) -> QuotaView:
    """Replace the owner's limits; a limit left out is the default. Lowering one below the usage
    takes nothing away: only what would need more of it is refused."""
    quotas.set_limits(session, owner, body)
    session.commit()
    return q.view(session, owner)


@router.post("/{owner}/check", responses=error_responses(403, 404, 422, descriptions={
    403: "the launch would pass a limit (QUOTA_EXCEEDED)", 404: "no such product or version"}))
def check_launch(owner: Owner, body: LaunchCheck, session: SessionDep, _: ServiceCaller, q: QuotasDep) -> QuotaView:
    """Whether a launch (resolved options) fits the owner's quota now: the quota, or 403
    QUOTA_EXCEEDED as the launch would get it. Nothing is created or held."""
    demand = quotas.cluster_demand(q.manifest_of(body.product, body.version), body.options, q.floating_ips)
    quotas.admit(session, owner, demand, q.defaults, q.manifest_of, q.floating_ips)
    view = q.view(session, owner)
    session.rollback()
    return view
