"""A running member's config files replaced, then its product's reload run, for the orchestrator
after a resize re-rendered them with the member's new peers (``PUT
/spindle/v1/containers/{name}/files`` on the agent; only the platform may ask, with the internal
token; only Spindle's own containers).

Where a file lives decides how it is replaced: a container with a read-only root has each config
file bound from its executor's sandbox, so the bind's source on this node is rewritten in place
(same inode: the bind keeps pointing at it); any other file goes in through Docker's archive API.
Then ``reload`` (an argv, as ``container_exec`` takes one) runs in the container as its user; its
exit code and the end of its output are answered."""
import json
import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

import docker

from spindle_common.files import files_archive
from spindle_mesos_embedded import container_exec
from spindle_mesos_embedded.container_logs import NAME, spindle_container

MAX_FILES = 64
MAX_FILE_BYTES = 1 << 20
FIELDS = frozenset({"files", "reload"})


class CannotWrite(Exception):
    """A file cannot be put where the request says (a read-only root, and not a bound config file)."""


@dataclass(frozen=True)
class FilesRequest:
    files: dict[str, str]
    reload: container_exec.ExecRequest | None


def parse_request(name: str, body: Any) -> FilesRequest | str:
    """What is asked, or why it is refused (a 400)."""
    if not NAME.match(name):
        return f"{name!r} is not a Spindle container name"
    if not isinstance(body, dict) or set(body) - FIELDS:
        return f"the body is a JSON object of {sorted(FIELDS)}"
    files = body.get("files")
    if not isinstance(files, dict) or not 1 <= len(files) <= MAX_FILES:
        return f"files must be an object of 1 … {MAX_FILES} path → text"
    for path, content in files.items():
        pure = PurePosixPath(path)
        if not pure.is_absolute() or ".." in pure.parts or "\x00" in path or len(path) > 4096:
            return f"{path!r} is not an absolute path"
        if not isinstance(content, str) or len(content.encode()) > MAX_FILE_BYTES:
            return f"the content of {path} must be text of at most {MAX_FILE_BYTES} bytes"
    reload = None
    if body.get("reload") is not None:
        parsed = container_exec.parse_request(name, body["reload"])
        if isinstance(parsed, str):
            return f"reload: {parsed}"
        reload = parsed
    return FilesRequest(dict(files), reload)


def put_files(client: docker.DockerClient, name: str, files: dict[str, str]) -> list[str]:
    """Replace ``files`` in the running Spindle container ``name``; how each went in ("bind" or
    "archive"), in order. NoSuchContainer, ContainerNotRunning or CannotWrite before anything is written."""
    container = spindle_container(client, name)
    if container.status != "running":
        raise container_exec.ContainerNotRunning(name)
    binds = {m["Destination"]: m["Source"] for m in container.attrs.get("Mounts", []) if m.get("Type") == "bind"}
    read_only = bool(container.attrs.get("HostConfig", {}).get("ReadonlyRootfs"))
    unbound = [path for path in files if path not in binds]
    if unbound and read_only:
        raise CannotWrite(f"{', '.join(unbound)}: the container's root is read-only and they are not bound "
                          "config files")
    for path in files:
        if path in binds and not os.path.isfile(binds[path]):
            raise CannotWrite(f"{path} is bound from {binds[path]}, which is not a file")
    how = []
    for path, content in files.items():
        if path in binds:
            with open(binds[path], "w") as file:  # in place: the bind refers to this inode
                file.write(content)
            how.append("bind")
        else:
            how.append("archive")
    if unbound:
        container.put_archive("/", files_archive({p: files[p] for p in unbound}))
    return how


def run_reload(client: docker.DockerClient, name: str, reload: container_exec.ExecRequest) -> dict[str, Any]:
    """Run ``reload`` in the container to its end: its exit code and the last 2000 characters of its output."""
    output, end = "", {}
    for line in container_exec.start_exec(client, name, reload):
        event = json.loads(line)
        if "stream" in event:
            output = (output + event["data"])[-2000:]
        else:
            end = event
    return {"reload_exit_code": end.get("exit_code"), "reload_output": output,
            **({"reload_timed_out": True} if end.get("timed_out") else {})}
