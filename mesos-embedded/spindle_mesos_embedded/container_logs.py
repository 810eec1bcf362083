"""A member container's logs, read from this node's dockerd for the api-server (``GET
/spindle/v1/containers/{name}/logs`` on the agent): only the platform may ask (the internal token the
agent already holds), only Spindle's own containers are served (``spindle-…`` with the
``io.spindle.owned`` label), and what the caller may see was decided by the api-server.

Lines come as Docker keeps them (json-file, capped at 3 × 10 MB per container), each with its
RFC 3339 timestamp, stdout and stderr together in order."""
import re
from collections.abc import Iterator
from datetime import UTC, datetime

import docker
from docker.errors import DockerException, NotFound
from docker.models.containers import Container

from spindle_common.contracts import OWNED_LABEL

NAME = re.compile(r"^spindle-[a-z0-9][a-z0-9-]{0,200}$")
MAX_TAIL = 10_000
MAX_SINCE = 4_102_444_800  # 2100-01-01: later is no time Docker (or datetime) can take


class NoSuchContainer(Exception):
    pass


def check_request(name: str, tail: int | None, since: float | None) -> str | None:
    """Why a request for logs is refused (a 400), or None."""
    if not NAME.match(name):
        return f"{name!r} is not a Spindle container name"
    if tail is not None and not 0 <= tail <= MAX_TAIL:
        return f"tail must be 0 … {MAX_TAIL}"
    if since is not None and not 0 <= since <= MAX_SINCE:
        return f"since must be a unix time (seconds, 0 … {MAX_SINCE})"
    return None


def spindle_container(client: docker.DockerClient, name: str) -> Container:
    """The container ``name`` if it is Spindle's own (the owned label); NoSuchContainer otherwise."""
    try:
        container = client.containers.get(name)
    except NotFound as exc:
        raise NoSuchContainer(name) from exc
    if container.labels.get(OWNED_LABEL) != "true":
        raise NoSuchContainer(name)
    return container


def open_logs(client: docker.DockerClient, name: str, tail: int | None, since: float | None,
              follow: bool) -> Iterator[bytes]:
    """The container's log lines (bytes, newline-ended, timestamp first); following, until it ends."""
    container = spindle_container(client, name)
    options: dict = {"stream": True, "follow": follow, "timestamps": True, "tail": "all" if tail is None else tail}
    if since is not None:
        options["since"] = datetime.fromtimestamp(since, UTC)
    try:
        yield from container.logs(**options)
    except (DockerException, OSError):  # the container went while we read
        return
