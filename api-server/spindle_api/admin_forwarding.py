"""Admin endpoints that are the inventory services' own API, forwarded as the signed-in admin."""
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from spindle_api.api.deps import AdminUser, SettingsDep
from spindle_api.upstream import Service, service_client


def forward(router: APIRouter, method: str, path: str, service: Service, upstream_path: str,
            summary: str, status_code: int = 200) -> None:
    """Add ``method path`` to ``router``: it calls ``service`` at ``upstream_path`` (same path
    parameters, query string and JSON body) with role ``admin`` and returns the answer as it is."""

    def call(request: Request, admin: AdminUser, settings: SettingsDep, body: dict[str, Any] | None) -> Any:
        with service_client(settings, service, admin, role="admin") as client:
            answer = client.request(method, upstream_path.format(**request.path_params),
                                    params=list(request.query_params.multi_items()), json=body)
        return Response(status_code=204) if status_code == 204 else answer

    def with_body(request: Request, admin: AdminUser, settings: SettingsDep,
                  body: Annotated[dict[str, Any] | None, Body()] = None) -> Any:
        return call(request, admin, settings, body)

    def without_body(request: Request, admin: AdminUser, settings: SettingsDep) -> Any:
        return call(request, admin, settings, None)

    router.add_api_route(path, with_body if method in ("POST", "PUT", "PATCH") else without_body,
                         methods=[method], status_code=status_code, summary=summary,
                         response_model=None, name=f"{method.lower()} {path}")
