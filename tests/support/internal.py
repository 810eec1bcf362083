"""Tests' calls to internal services: the platform's internal token and an identity signed with its
key (``spindle_common.auth``). ``tests/conftest.py`` makes the running platform's identity key this
process's (``use_platform_identity_key``) before any test module is imported, so these headers, the
``ServiceClient``s and the services a test builds in-process (their settings read it) all agree."""
import os
import time
from pathlib import Path

from spindle_common import auth

# Long enough for any test session (module-level headers are made once, at import).
TEST_TTL_S = 24 * 3600


def use_platform_identity_key(env_file: Path) -> None:
    """``SPINDLE_IDENTITY_KEY`` and ``SPINDLE_NODE_IDENTITY_KEY`` of the running platform
    (``deploy/up``'s spindle.env), unless this process has them already; without a platform, the
    services' development defaults stay."""
    if not env_file.exists():
        return
    for line in env_file.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and name in ("SPINDLE_IDENTITY_KEY", "SPINDLE_NODE_IDENTITY_KEY"):
            os.environ.setdefault(name, value)


def internal_headers(token: str, actor: str, role: auth.Role, identity_key: str | None = None) -> dict[str, str]:
    """The headers of an internal call as ``actor`` in ``role`` (signed with this process's identity
    key unless given one), good for a day."""
    return auth.internal_headers(token, actor, role, identity_key, ttl_s=TEST_TTL_S)


def forged_headers(token: str, actor: str, role: str) -> list[dict[str, str]]:
    """What a caller holding the token but not the identity key might send to claim ``role``: the old
    caller-chosen headers, an identity signed with a wrong key, one signed with the nodes' key (what
    a node holds), one signed right but for another role with the role swapped, and an expired one."""
    now = int(time.time())
    right = auth.sign_identity(auth.env_identity_key(), actor, "user", now + 600)
    swapped = right.replace(";user;", f";{role};", 1)
    return [
        {"Authorization": f"Bearer {token}", "X-Spindle-Actor": actor, "X-Spindle-Role": role},
        {"Authorization": f"Bearer {token}",
         auth.IDENTITY_HEADER: auth.sign_identity("not-the-key", actor, role, now + 600)},  # type: ignore[arg-type]
        {"Authorization": f"Bearer {token}",
         auth.IDENTITY_HEADER: auth.sign_identity(auth.env_identity_key("node"), actor, role, now + 600)},  # type: ignore[arg-type]
        {"Authorization": f"Bearer {token}", auth.IDENTITY_HEADER: swapped},
        {"Authorization": f"Bearer {token}",
         auth.IDENTITY_HEADER: auth.sign_identity(auth.env_identity_key(), actor, role, now - 1)},  # type: ignore[arg-type]
    ]
