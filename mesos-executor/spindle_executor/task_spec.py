"""What a member's container must look like, as carried in the Mesos TaskInfo's ``data`` (JSON).

The scheduler builds it from the placement (disks, IP, cpuset) and the product manifest (image,
command, env, config files, health check); the executor only executes it.
"""
import json
from dataclasses import dataclass, field
from typing import Any

OWNED_LABEL = "io.spindle.owned"
TASK_LABEL = "io.spindle.task-id"
MEMBER_LABEL = "io.spindle.member"
CLUSTER_LABEL = "io.spindle.cluster"


class InvalidTaskSpec(ValueError):
    """The task's data cannot be turned into a container (the message says which field)."""


@dataclass(frozen=True)
class DiskMount:
    host_path: str  # the dedicated disk's mount point on the node
    container_path: str  # /data/1 … /data/N


@dataclass(frozen=True)
class HealthCheck:
    """``command`` runs inside the container (exit 0 = healthy); or ``tcp_port`` must accept."""

    command: list[str] | None = None
    tcp_port: int | None = None
    timeout_seconds: float = 120.0
    interval_seconds: float = 0.5


@dataclass(frozen=True)
class ContainerSpec:
    task_id: str
    cluster_id: str
    member_id: str
    image: str
    command: list[str] | None
    cpus: float
    mem_mb: int
    cpuset: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    disks: list[DiskMount] = field(default_factory=list)
    network: str | None = None
    ip: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # container path -> content
    health: HealthCheck | None = None
    hostname: str | None = None

    @property
    def container_name(self) -> str:
        return f"spindle-{self.member_id}"

    @property
    def labels(self) -> dict[str, str]:
        return {OWNED_LABEL: "true", TASK_LABEL: self.task_id, MEMBER_LABEL: self.member_id,
                CLUSTER_LABEL: self.cluster_id}


def _require(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or (kind is str and not value):
        raise InvalidTaskSpec(f"task data field {key!r} must be a non-empty {kind.__name__}")
    return value


def parse_task_spec(task_id: str, raw: bytes | str) -> ContainerSpec:
    """Validate the task's JSON data and build its container spec."""
    try:
        data = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidTaskSpec(f"task data is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidTaskSpec("task data must be a JSON object")
    cpus, mem_mb = data.get("cpus"), data.get("mem_mb")
    if not isinstance(cpus, (int, float)) or cpus <= 0:
        raise InvalidTaskSpec("task data field 'cpus' must be a positive number")
    if not isinstance(mem_mb, int) or mem_mb < 6:  # Docker refuses less than 6 MiB
        raise InvalidTaskSpec("task data field 'mem_mb' must be an integer ≥ 6")
    disks = [DiskMount(host_path=_require(d, "host_path", str), container_path=f"/data/{i}")
             for i, d in enumerate(data.get("disks", []), start=1)]
    health = data.get("health")
    if health is not None and not (health.get("command") or health.get("tcp_port")):
        raise InvalidTaskSpec("health check needs 'command' or 'tcp_port'")
    if bool(data.get("network")) != bool(data.get("ip")):
        raise InvalidTaskSpec("'network' and 'ip' go together")
    return ContainerSpec(
        task_id=task_id,
        cluster_id=_require(data, "cluster_id", str),
        member_id=_require(data, "member_id", str),
        image=_require(data, "image", str),
        command=data.get("command"),
        cpus=float(cpus),
        mem_mb=mem_mb,
        cpuset=data.get("cpuset"),
        env={str(k): str(v) for k, v in data.get("env", {}).items()},
        disks=disks,
        network=data.get("network"),
        ip=data.get("ip"),
        files=dict(data.get("files", {})),
        health=HealthCheck(**health) if health else None,
        hostname=data.get("hostname"),
    )
