"""Clients for the internal services behind the public API, calling as the signed-in user."""
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_common.auth import Role
from spindle_common.clients import ServiceClient

Service = Literal["orchestrator", "scheduler", "disk-service", "network-service"]


def service_url(settings: Settings, service: Service) -> str:
    return {"orchestrator": settings.orchestrator_url, "scheduler": settings.scheduler_url,
            "disk-service": settings.disk_service_url, "network-service": settings.network_service_url}[service]


@contextmanager
def service_client(settings: Settings, service: Service, user: User,
                   role: Role = "service") -> Iterator[ServiceClient]:
    """A client of ``service`` acting for ``user`` (the api-server has already decided what the user
    may do; ``admin`` is for the admin endpoints' inventory services)."""
    client = ServiceClient(service_url(settings, service), settings.internal_token, actor=user.username, role=role)
    try:
        yield client
    finally:
        client.close()
