"""Who is calling an internal service, and may they.

Internal services trust only callers that present two things:

- the platform's internal token as the bearer (``SPINDLE_INTERNAL_TOKEN``, written by ``deploy/up``):
  the caller is part of the platform;
- a **signed identity**, ``X-Spindle-Identity: v1;<actor>;<role>;<expires>;<signature>`` (actor
  percent-encoded, ``expires`` in Unix seconds, the signature HMAC-SHA256 of everything before it
  with the identity key ``SPINDLE_IDENTITY_KEY``, a secret apart from the token): who acts, in
  which role, until when. Actor and role come from it alone; a caller without the key cannot
  choose them. The api-server signs for the users it authenticated (actor: their stable id); the
  scheduler, the orchestrator and the others sign for themselves (role ``service``).

Nodes (node agents, Mesos agents, executors) hold only the **node identity key**
(``SPINDLE_NODE_IDENTITY_KEY``), and an identity signed with it is good for role ``node`` alone:
a node can act as a node — on the routes that allow it — never as an admin, a service or a user.

A missing, malformed, badly signed or expired identity is 401; a role the route does not allow, 403.
An identity is good for ``IDENTITY_TTL_S`` after it is signed (clients sign every request anew).
"""
import hashlib
import hmac
import os
import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import quote, unquote

from spindle_common.errors import ApiError

Role = Literal["admin", "user", "service", "node"]
ROLES: tuple[str, ...] = ("admin", "user", "service", "node")
IDENTITY_HEADER = "X-Spindle-Identity"
IDENTITY_VERSION = "v1"
# How long a signed identity is good for; long enough for a slow call, short enough that one seen
# in a log is soon worthless.
IDENTITY_TTL_S = 300
# The services' development defaults, like the internal token's (``ServiceSettings.identity_key``).
DEV_IDENTITY_KEY = "dev-insecure-identity-key"
DEV_NODE_IDENTITY_KEY = "dev-insecure-node-identity-key"


@dataclass(frozen=True)
class Caller:
    actor: str
    role: Role


def env_identity_key(role: str = "service") -> str:
    """The key of this process's environment that signs ``role`` (``SPINDLE_NODE_IDENTITY_KEY`` for
    ``node``, ``SPINDLE_IDENTITY_KEY`` for the others), as the services' settings read them: what a
    client signs with when it is given no key."""
    if role == "node":
        return os.environ.get("SPINDLE_NODE_IDENTITY_KEY") or DEV_NODE_IDENTITY_KEY
    return os.environ.get("SPINDLE_IDENTITY_KEY") or DEV_IDENTITY_KEY


def _signature(key: str, signed: str) -> str:
    return hmac.new(key.encode(), signed.encode(), hashlib.sha256).hexdigest()


def sign_identity(key: str, actor: str, role: Role, expires: int) -> str:
    """The ``X-Spindle-Identity`` value for ``actor`` in ``role`` until ``expires`` (Unix seconds)."""
    signed = f"{IDENTITY_VERSION};{quote(actor, safe='')};{role};{expires}"
    return f"{signed};{_signature(key, signed)}"


def verify_identity(key: str, value: str | None, now: float, node_key: str | None = None) -> Caller:
    """The caller an ``X-Spindle-Identity`` value names, if it is signed — role ``node`` with
    ``node_key``, every other role with ``key`` — and has not expired; a 401 saying what is wrong
    otherwise."""
    if not value:
        raise ApiError(401, "UNAUTHENTICATED", f"a signed identity ({IDENTITY_HEADER}) is required")
    signed, _, signature = value.rpartition(";")
    parts = signed.split(";")
    if len(parts) != 4 or parts[0] != IDENTITY_VERSION:
        raise ApiError(401, "UNAUTHENTICATED", f"{IDENTITY_HEADER} is not a signed identity")
    if parts[2] == "node":
        if node_key is None:
            raise ApiError(401, "UNAUTHENTICATED", f"{IDENTITY_HEADER}: nodes are not accepted here")
        key = node_key
    if not hmac.compare_digest(signature.encode(), _signature(key, signed).encode()):
        raise ApiError(401, "UNAUTHENTICATED", f"{IDENTITY_HEADER} is not signed with the identity key")
    _, actor, role, expires = parts
    if role not in ROLES or not actor or not expires.isdigit():
        raise ApiError(401, "UNAUTHENTICATED", f"{IDENTITY_HEADER} names no valid actor, role and expiry")
    if int(expires) <= now:
        raise ApiError(401, "UNAUTHENTICATED", f"{IDENTITY_HEADER} has expired")
    return Caller(actor=unquote(actor), role=role)  # type: ignore[arg-type]


def internal_headers(token: str, actor: str, role: Role, identity_key: str | None = None,
                     ttl_s: int = IDENTITY_TTL_S) -> dict[str, str]:
    """Headers a service client sends to another service: the token and ``actor`` in ``role``,
    signed with ``identity_key`` (default: the environment's key for ``role``) for ``ttl_s`` from now."""
    key = identity_key if identity_key is not None else env_identity_key(role)
    return {"Authorization": f"Bearer {token}",
            IDENTITY_HEADER: sign_identity(key, actor, role, int(time.time()) + ttl_s)}


def caller_dependency(internal_token: str, *allowed: Role, identity_key: str | None = None,
                      node_identity_key: str | None = None):
    """A FastAPI dependency that authenticates the caller and requires one of ``allowed`` roles
    (the keys default to the environment's)."""
    from fastapi import Header  # (here: the clients, an executor's among them, never import FastAPI)

    key = identity_key if identity_key is not None else env_identity_key()
    node_key = node_identity_key if node_identity_key is not None else env_identity_key("node")

    def dependency(
        authorization: str | None = Header(default=None),
        x_spindle_identity: str | None = Header(default=None),
    ) -> Caller:
        presented = (authorization or "").removeprefix("Bearer ").strip()
        if not presented or not hmac.compare_digest(presented.encode(), internal_token.encode()):
            raise ApiError(401, "UNAUTHENTICATED", "a valid internal service token is required")
        caller = verify_identity(key, x_spindle_identity, time.time(), node_key)
        if caller.role not in allowed:
            raise ApiError(403, "FORBIDDEN", f"this action needs role {' or '.join(allowed)}",
                           {"role": caller.role})
        return caller

    return dependency


def require_own_node(caller: Caller, node: str) -> None:
    """A node acts only for itself: its actor is ``<component>/<node>`` (``node-agent/n1``); 403 else."""
    if caller.role == "node" and caller.actor.rpartition("/")[2] != node:
        raise ApiError(403, "FORBIDDEN", f"a node may act only for itself, not for node {node!r}",
                       {"actor": caller.actor, "node": node})


def require(*allowed: Role):
    """Like ``caller_dependency``, with the token and the identity key read from the serving app's
    settings (``app.state.settings``, set by ``create_service_app``)."""
    from fastapi import Header, Request

    def dependency(
        request: Request,
        authorization: str | None = Header(default=None),
        x_spindle_identity: str | None = Header(default=None),
    ) -> Caller:
        settings = request.app.state.settings
        check = caller_dependency(settings.internal_token, *allowed, identity_key=settings.identity_key,
                                  node_identity_key=settings.node_identity_key)
        return check(authorization, x_spindle_identity)

    return dependency
