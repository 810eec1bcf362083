"""The plans say what a launch or resize would be told: replicas that cannot be apart on the
platform's nodes are refused (``catalog.replicas_sharing``, the orchestrator's check)."""
import logging
from typing import Any

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.upstream import service_client
from spindle_common.catalog import platform_defaults, replicas_sharing
from spindle_common.errors import ApiError

log = logging.getLogger("spindle.api.replicas")


def for_the_platform(settings: Settings, user: User, manifest: dict[str, Any],
                     options: dict[str, Any]) -> dict[str, Any]:
    """The options as a launch on the platform's nodes now (the scheduler's: the active agents) takes
    them: settings whose default depends on the nodes decided (``catalog.platform_defaults``, HDFS's
    ``ha``); 422 REPLICAS_CANNOT_BE_APART when a role kept apart has more members than those nodes may
    take. While the scheduler does not answer, nothing is checked and the defaults are one node's."""
    try:
        with service_client(settings, "scheduler", user) as scheduler:
            nodes = [node["name"] for node in scheduler.request("GET", "/nodes")]
    except ApiError as exc:
        log.warning("cannot list the platform's nodes: %s", exc.message)
        return platform_defaults(manifest, options, [])
    options = platform_defaults(manifest, options, nodes)
    replicas_sharing(manifest, options, nodes)
    return options
