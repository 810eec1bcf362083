"""Who is calling an internal service, and may they.

Internal services listen on loopback and trust only callers that present the platform's internal
token (written by ``deploy/up`` to ``SPINDLE_INTERNAL_TOKEN``). The api-server authenticates end
users and forwards their identity in ``X-Spindle-Actor`` / ``X-Spindle-Role``; the scheduler and
orchestrator call with role ``service``.
"""
import hmac
from dataclasses import dataclass
from typing import Literal

from fastapi import Header, Request

from spindle_common.errors import ApiError

Role = Literal["admin", "user", "service"]
ROLES: tuple[str, ...] = ("admin", "user", "service")


@dataclass(frozen=True)
class Caller:
    actor: str
    role: Role


def internal_headers(token: str, actor: str, role: Role) -> dict[str, str]:
    """Headers a service client sends to another service."""
    return {"Authorization": f"Bearer {token}", "X-Spindle-Actor": actor, "X-Spindle-Role": role}


def caller_dependency(internal_token: str, *allowed: Role):
    """A FastAPI dependency that authenticates the caller and requires one of ``allowed`` roles."""

    def dependency(
        authorization: str | None = Header(default=None),
        x_spindle_actor: str | None = Header(default=None),
        x_spindle_role: str | None = Header(default=None),
    ) -> Caller:
        presented = (authorization or "").removeprefix("Bearer ").strip()
        if not presented or not hmac.compare_digest(presented, internal_token):
            raise ApiError(401, "UNAUTHENTICATED", "a valid internal service token is required")
        if x_spindle_role not in ROLES or not x_spindle_actor:
            raise ApiError(401, "UNAUTHENTICATED", "X-Spindle-Actor and X-Spindle-Role headers are required")
        if x_spindle_role not in allowed:
            raise ApiError(403, "FORBIDDEN", f"this action needs role {' or '.join(allowed)}",
                           {"role": x_spindle_role})
        return Caller(actor=x_spindle_actor, role=x_spindle_role)  # type: ignore[arg-type]

    return dependency


def require(*allowed: Role):
    """Like ``caller_dependency``, with the token read from the serving app's settings
    (``app.state.settings``, set by ``create_service_app``)."""

    def dependency(
        request: Request,
        authorization: str | None = Header(default=None),
        x_spindle_actor: str | None = Header(default=None),
        x_spindle_role: str | None = Header(default=None),
    ) -> Caller:
        check = caller_dependency(request.app.state.settings.internal_token, *allowed)
        return check(authorization, x_spindle_actor, x_spindle_role)

    return dependency
