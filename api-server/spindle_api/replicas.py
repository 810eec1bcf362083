"""The plans say what a launch or resize would be told: replicas that cannot be apart on the
platform's nodes are refused (``catalog.replicas_sharing``, the orchestrator's check)."""
import logging
from typing import Any

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.upstream import service_client
from spindle_common.catalog import replicas_sharing
from spindle_common.errors import ApiError

log = logging.getLogger("spindle.api.replicas")


def check_replicas_apart(settings: Settings, user: User, manifest: dict[str, Any], options: dict[str, Any]) -> None:
    """422 REPLICAS_CANNOT_BE_APART when a role kept apart has more members than the platform's nodes
    (the scheduler's: the active agents) may take; nothing checked while the scheduler does not answer."""
    try:
        with service_client(settings, "scheduler", user) as scheduler:
            nodes = [node["name"] for node in scheduler.request("GET", "/nodes")]
    except ApiError as exc:
        log.warning("cannot list the platform's nodes: %s", exc.message)
        return
    replicas_sharing(manifest, options, nodes)
