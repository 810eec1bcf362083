"""The one error envelope: ``{"error": {"code", "message", "details"}}`` for every 4xx/5xx, its
OpenAPI shape (``ErrorEnvelope``) and ``error_responses`` to document a route's error statuses."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # imported where the handlers are installed: clients (an executor's) raise ApiError too
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse


class ApiError(Exception):
    """An error value with a machine-readable code, returned to clients as it is."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}  # e.g. Retry-After with a 429 or 503


class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str = Field(description="machine-readable, e.g. CLUSTER_NOT_FOUND or VALIDATION_FAILED",
                      examples=["CLUSTER_NOT_FOUND"])
    message: str = Field(description="for people")
    details: dict[str, Any] = Field(description="what the error is about (free-form, by code)")


class ErrorEnvelope(BaseModel):
    """Every error response of every Spindle service."""

    model_config = ConfigDict(extra="forbid")
    error: ErrorBody


# What each status means when a route documents it without a description of its own.
ERROR_DESCRIPTIONS: dict[int, str] = {
    400: "the body cannot be read (e.g. it is not UTF-8) (BAD_REQUEST)",
    401: "no API token or an unknown one (UNAUTHENTICATED), a revoked one (TOKEN_REVOKED) or an expired one "
         "(TOKEN_EXPIRED)",
    403: "the caller may not do this: the endpoint is for administrators (FORBIDDEN)",
    404: "no such resource (or not one the caller may see)",
    405: "the path exists, but not with this method (METHOD_NOT_ALLOWED; Allow lists the methods)",
    409: "the request conflicts with the resource's current state",
    413: "the request body is too large (REQUEST_TOO_LARGE)",
    415: "the body is not JSON",
    422: "a parameter or the body is not valid (VALIDATION_FAILED names each field)",
    429: "too many requests; retry after the time in Retry-After",
    502: "an internal service failed or answered outside its contract",
    503: "a service this endpoint needs is unreachable",
}


def error_responses(*statuses: int, descriptions: Mapping[int, str] | None = None) -> dict[int | str, dict[str, Any]]:
    """FastAPI ``responses=`` entries: each status with the error envelope as its body, described by
    ``descriptions[status]`` or else ``ERROR_DESCRIPTIONS``."""
    descriptions = descriptions or {}
    unknown = set(descriptions) - set(statuses)
    if unknown:
        raise ValueError(f"descriptions for statuses not listed: {sorted(unknown)}")
    return {status: {"model": ErrorEnvelope, "description": descriptions.get(status) or ERROR_DESCRIPTIONS.get(status)
                     or HTTPStatus(status).phrase}
            for status in statuses}


def envelope(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON body of every error response."""
    return {"error": {"code": code, "message": message, "details": details or {}}}


_HTTP_CODES = {
    400: "BAD_REQUEST", 401: "UNAUTHENTICATED", 403: "FORBIDDEN", 404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 413: "REQUEST_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE",
    429: "TOO_MANY_REQUESTS",
}


def _validation_details(exc: RequestValidationError) -> dict[str, Any]:
    errors = [
        {"field": ".".join(str(p) for p in err.get("loc", ())), "problem": err.get("msg", "")}
        for err in exc.errors()
    ]
    return {"errors": errors}


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app serves at this request's path (for ``Allow``)."""
    try:  # FastAPI ≥ 0.16x keeps included routers as one entry each; this walks their routes
        from fastapi.routing import iter_route_contexts
        routes: Iterable[Any] = iter_route_contexts(request.app.routes)
    except ImportError:
        routes = request.app.routes
    path = request.scope.get("path", "")
    methods: set[str] = set()
    for route in routes:
        route_methods, path_regex = getattr(route, "methods", None), getattr(route, "path_regex", None)
        if route_methods and path_regex is not None and path_regex.match(path):
            methods |= set(route_methods)
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    """Make every error leave the service in the envelope, with the right status."""
    import sqlalchemy.exc
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(envelope(exc.code, exc.message, exc.details), status_code=exc.status,
                            headers=exc.headers or None)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            envelope("VALIDATION_FAILED", "the request is not valid", _validation_details(exc)),
            status_code=422,
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
        headers = dict(exc.headers or {})
        details: dict[str, Any] = {}
        if exc.status_code == 405:
            # Starlette names only the first route at this path; several routes may share it.
            allow = allowed_methods(request) or sorted(
                m.strip() for m in headers.get("Allow", "").split(",") if m.strip())
            headers["Allow"] = ", ".join(allow)
            details = {"method": request.method, "allow": allow}
            message = f"{request.method} is not allowed here; use {headers['Allow']}"
            return JSONResponse(envelope(code, message, details), status_code=405, headers=headers)
        return JSONResponse(envelope(code, str(exc.detail), details), status_code=exc.status_code,
                            headers=headers or None)

    @app.exception_handler(sqlalchemy.exc.TimeoutError)
    async def _pool_exhausted(_: Request, exc: sqlalchemy.exc.TimeoutError) -> JSONResponse:
        # Every pooled database connection stayed busy past the pool's timeout: overload, not a bug.
        return JSONResponse(envelope("UNAVAILABLE", "the service is busy; try again shortly",
                                     {"reason": "database connections exhausted"}),
                            status_code=503, headers={"Retry-After": "1"})

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            envelope("INTERNAL", "internal error", {"type": type(exc).__name__}), status_code=500
        )
