"""Admin endpoints that are the inventory services' own API (disk-service, network-service),
called as the signed-in admin; their answers are checked against the typed models of
``spindle_api.schemas`` before they are returned."""
from typing import Any, TypeVar

from pydantic import BaseModel

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.schemas import upstream_list, upstream_model
from spindle_api.upstream import Service, service_client

M = TypeVar("M", bound=BaseModel)


def admin_request(settings: Settings, admin: User, service: Service, method: str, path: str,
                  **kwargs: Any) -> tuple[int, Any]:
    """``method path`` on ``service`` with role ``admin``: its status and JSON answer (None when empty).
    ``path`` is built by the caller from checked, percent-encoded parameters (``params.segment``)."""
    with service_client(settings, service, admin, role="admin") as client:
        response = client.request_raw(method, path, **kwargs)
    return response.status_code, (response.json() if response.content else None)


def admin_one(model: type[M], settings: Settings, admin: User, service: Service, method: str, path: str,
              **kwargs: Any) -> M:
    return upstream_model(model, admin_request(settings, admin, service, method, path, **kwargs)[1], service)


def admin_list(model: type[M], settings: Settings, admin: User, service: Service, path: str,
               **kwargs: Any) -> list[M]:
    return upstream_list(model, admin_request(settings, admin, service, "GET", path, **kwargs)[1], service)
