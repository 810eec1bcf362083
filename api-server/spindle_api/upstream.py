"""Clients for the internal services behind the public API, calling as the signed-in user."""
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import httpx

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_common.auth import Role
from spindle_common.clients import ServiceClient
from spindle_common.errors import ApiError

Service = Literal["orchestrator", "scheduler", "disk-service", "network-service"]


def actor_of(user: User) -> str:
    """The user's stable, never reused identity as the internal services know it ("u<users.id>"):
    what the api-server forwards as the actor and what the orchestrator keys ownership by
    (``clusters.owner_id``). A user deleted and created again under the same name is another actor."""
    return f"u{user.id}"


def service_url(settings: Settings, service: Service) -> str:
    return {"orchestrator": settings.orchestrator_url, "scheduler": settings.scheduler_url,
            "disk-service": settings.disk_service_url, "network-service": settings.network_service_url}[service]


class UpstreamClient(ServiceClient):
    """A ``ServiceClient`` whose internal service's own failures (a 5xx other than 503) reach the
    public API as a 502 naming the service, never as the api-server's 500."""

    def __init__(self, service: Service, base_url: str, internal_token: str, actor: str, role: Role = "service",
                 identity_key: str | None = None):
        super().__init__(base_url, internal_token, actor=actor, role=role, identity_key=identity_key)
        self.service = service

    def request_raw(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return super().request_raw(method, path, **kwargs)
        except ApiError as exc:
            if exc.status >= 500 and exc.status != 503:
                raise ApiError(502, "UPSTREAM_FAILED", f"{self.service} failed: {exc.code}: {exc.message}"[:1000],
                               {"service": self.service, "status": exc.status, "code": exc.code}) from exc
            if exc.status == 503:
                exc.details.setdefault("service", self.service)
            raise


@contextmanager
def service_client(settings: Settings, service: Service, user: User,
                   role: Role = "service") -> Iterator[UpstreamClient]:
    """A client of ``service`` acting for ``user`` (the api-server has already decided what the user
    may do; ``admin`` is for the admin endpoints' inventory services)."""
    client = UpstreamClient(service, service_url(settings, service), settings.internal_token, actor=actor_of(user),
                            role=role, identity_key=settings.identity_key)
    try:
        yield client
    finally:
        client.close()
