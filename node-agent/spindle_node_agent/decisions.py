"""The node agent's decisions, as pure functions over what the services answered (unit-tested)."""
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from spindle_disk.discovery import flatten
from spindle_disk.states import WIPING

MACVLAN = "macvlan"
REASON_MAX = 1024  # disk-service's WipeResult.reason


def disks_to_wipe(disks: Iterable[Mapping[str, Any]], node: str) -> list[Mapping[str, Any]]:
    """The disks this node must wipe now: its own, in state ``wiping``, by id. The list comes from
    disk-service filtered the same way; checking again costs nothing and never wipes a stranger."""
    return sorted((d for d in disks if d.get("node") == node and d.get("state") == WIPING), key=lambda d: d["id"])


def wipe_report(reason: str | None) -> dict[str, Any]:
    """The body of ``POST /disks/{id}/wipe-result`` for a wipe that ended with ``reason`` (None: it worked)."""
    if reason is None:
        return {"ok": True}
    return {"ok": False, "reason": f"wipe failed: {reason}"[:REASON_MAX]}


def classes_for_new_disks(classes: Mapping[str, str], known: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The configured classes (keyed by label, mount point, device path or serial) of disks disk-service
    does not know yet: a known disk keeps its class, so an admin's later change is not undone."""
    taken = {d.get(key) for d in known for key in ("fs_label", "mount_point", "device_path", "serial")} - {None}
    return {key: str(value) for key, value in classes.items() if key not in taken}


def discovery_due(last: float | None, now: float, every: float) -> bool:
    """Whether to run lsblk and post it again: never done yet, or ``every`` seconds since."""
    return last is None or now - last >= every


def registration_conflict(node: Mapping[str, Any], address: str, disk_root: str) -> str | None:
    """Why the node disk-service knows under our name is not this node (None: it is). Only the
    address and the disk root matter; cpus and memory may have been set by an admin."""
    differences = [f"{key} {node.get(key)!r} (this agent: {mine!r})"
                   for key, mine in (("address", address), ("disk_root", disk_root)) if node.get(key) != mine]
    if not differences:
        return None
    return f"node {node.get('name')} is registered with {', '.join(differences)}"


@dataclass(frozen=True)
class PoolNetwork:
    """The Docker network a macvlan pool needs on this node's dockerd."""

    pool: str
    docker_network: str
    cidr: str
    gateway: str
    auto_cidr: str
    parent: str
    exists: bool  # a network of that name is on the node's dockerd already (ensure_network checks it is ours)


def pool_networks(pools: Iterable[Mapping[str, Any]], existing: Iterable[str], parent: str) -> list[PoolNetwork]:
    """One network per macvlan pool, on this node's fabric interface ``parent`` (not the pool's own
    parent, which is the control plane host's). Bridge pools live on the control plane host only."""
    names = set(existing)
    return [PoolNetwork(pool=p["name"], docker_network=p["docker_network"], cidr=p["cidr"], gateway=p["gateway"],
                        auto_cidr=p["auto_cidr"], parent=parent, exists=p["docker_network"] in names)
            for p in sorted(pools, key=lambda p: p["name"]) if p.get("driver") == MACVLAN]


# A container Spindle launched that stopped this long ago is garbage: its executor removes it once it
# has read its end (seconds), members are never restarted in place (a replacement is a new
# container), so what stays is what a dead node left behind when it came back.
STALE_AFTER = timedelta(seconds=60)


def stale_containers(containers: Iterable[Mapping[str, Any]], now: datetime) -> list[str]:
    """Ids of Spindle's containers (``io.spindle.cluster`` label) that are not running and finished
    more than ``STALE_AFTER`` ago. ``containers``: Docker's inspect answers (``Id``, ``Config.Labels``,
    ``State.Running``, ``State.FinishedAt`` as RFC 3339 with nanoseconds)."""
    stale = []
    for c in containers:
        state = c.get("State") or {}
        if "io.spindle.cluster" not in ((c.get("Config") or {}).get("Labels") or {}) or state.get("Running"):
            continue
        finished = _docker_time(state.get("FinishedAt"))
        if finished is not None and now - finished > STALE_AFTER:
            stale.append(c["Id"])
    return sorted(stale)


def _docker_time(value: str | None) -> datetime | None:
    """Docker's ``2026-11-25T00:52:21.123456789Z`` (``0001-01-01T00:00:00Z``: never) as a datetime."""
    if not value or value.startswith("0001-"):
        return None
    head, _, frac = value.rstrip("Z").partition(".")
    try:
        return datetime.fromisoformat(f"{head}.{frac[:6].ljust(6, '0')}+00:00" if frac else f"{head}+00:00")
    except ValueError:
        return None


# Filesystems Spindle formats its disks with (disk-service's wipe keeps a disk's own).
MOUNTABLE_FS = frozenset({"xfs", "ext4"})
SAFE_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class Mount:
    device: str
    mount_point: str


def disks_to_mount(lsblk: Mapping[str, Any], label_prefix: str, disk_root: str) -> list[Mount]:
    """This node's Spindle disks that are mounted nowhere yet: a filesystem labelled ``label_prefix…``
    (xfs or ext4), each to go to ``<disk_root>/<label>``. The prefix keeps a node to its own disks
    where nodes share a kernel (simulated nodes: ``spdl-<node>-``)."""
    found = []
    for device in flatten(dict(lsblk)):
        label = device.get("label") or ""
        if not label.startswith(label_prefix) or not SAFE_LABEL.fullmatch(label):
            continue
        if (device.get("fstype") or "") not in MOUNTABLE_FS or not device.get("path"):
            continue
        if device.get("mountpoint") or any(device.get("mountpoints") or []):
            continue
        found.append(Mount(device["path"], posixpath.join(disk_root, label)))
    return sorted(found, key=lambda m: m.mount_point)
