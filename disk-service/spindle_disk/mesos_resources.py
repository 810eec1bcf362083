"""A node's Mesos agent ``--resources`` JSON, built from the inventory.

Follows ``Resource`` in mesos/v1/mesos.proto: each whole disk is a MOUNT disk (``disk.source.type =
MOUNT``, ``disk.source.mount.root`` = its mount point, scalar in MB = MiB) statically reserved to
Spindle's role with the refined ``reservations`` stack, so only Spindle is offered it and only whole.
"""
from collections.abc import Iterable
from typing import Any

from spindle_disk.states import OFFERED_STATES

SPINDLE_ROLE = "spindle"
MIB = 1024 * 1024


def scalar(name: str, value: float) -> dict[str, Any]:
    return {"name": name, "type": "SCALAR", "scalar": {"value": value}}


def mount_disk(mount_point: str, size_bytes: int, role: str = SPINDLE_ROLE) -> dict[str, Any]:
    """One MOUNT disk resource, statically reserved to ``role``."""
    resource = scalar("disk", size_bytes // MIB)
    resource["disk"] = {"source": {"type": "MOUNT", "mount": {"root": mount_point}}}
    resource["reservations"] = [{"type": "STATIC", "role": role}]
    return resource


def agent_resources(disks: Iterable[Any], cpus: float | None = None, mem_mb: int | None = None) -> list[dict[str, Any]]:
    """cpus and mem (when known) plus one disk resource per free or allocated disk, by mount point.

    ``disks`` are objects with ``state``, ``mount_point`` and ``size_bytes`` (inventory rows).
    """
    resources: list[dict[str, Any]] = []
    if cpus is not None:
        resources.append(scalar("cpus", cpus))
    if mem_mb is not None:
        resources.append(scalar("mem", mem_mb))
    offered = sorted((d for d in disks if d.state in OFFERED_STATES), key=lambda d: d.mount_point)
    resources.extend(mount_disk(d.mount_point, d.size_bytes) for d in offered)
    return resources
