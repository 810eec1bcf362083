"""``GET /status``: the health of every Spindle service, as Consul's checks report it."""
from dataclasses import asdict
from typing import Literal

import httpx
from fastapi import APIRouter
from pydantic import BaseModel

from spindle_api.api.deps import SettingsDep
from spindle_client.status import service_statuses
from spindle_common.errors import ApiError, error_responses

router = APIRouter(tags=["status"])


class ServiceStatus(BaseModel):
    name: str
    status: Literal["passing", "warning", "critical", "missing"]
    instances: list[str]
    detail: str


class PlatformStatus(BaseModel):
    services: list[ServiceStatus]


@router.get("/status", responses=error_responses(
    503, descriptions={503: "Consul is unreachable (CONSUL_UNAVAILABLE)"}))
def platform_status(settings: SettingsDep) -> PlatformStatus:
    """Health of each service; ``missing`` when no instance is registered in Consul."""
    consul_url = settings.consul_url
    try:
        statuses = service_statuses(consul_url)
    except httpx.HTTPError as exc:
        raise ApiError(503, "CONSUL_UNAVAILABLE", f"cannot read service health from Consul at {consul_url}: {exc}",
                       {"consul_url": consul_url}) from exc
    return PlatformStatus(services=[ServiceStatus(**asdict(s)) for s in statuses])
