"""Which block devices in a node's ``lsblk --json`` output are disks prepared for Spindle.

Pure functions over lsblk's JSON. SAFETY: a device is picked up only when it carries a Spindle
filesystem label (``spdl-…``) or is mounted below the node's disk root, and never when it is
mounted on a system path (``/``, ``/boot``, …). A labelled device mounted somewhere else is another
node's disk (simulated nodes share one kernel, so every node's lsblk lists every node's disks).
Everything else is reported as ignored, with why.
"""
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LSBLK_COMMAND = ["lsblk", "--json", "-b", "-o", "NAME,PATH,SERIAL,SIZE,ROTA,TRAN,TYPE,MOUNTPOINT,FSTYPE,LABEL,MODEL"]
SPINDLE_LABEL_PREFIX = "spdl-"
SYSTEM_MOUNTS = frozenset({"/", "/boot", "/boot/efi", "/usr", "/var", "/home", "/etc", "/opt", "/srv", "/tmp",
                           "[SWAP]"})
BLOCK_TYPES = frozenset({"disk", "part", "loop"})


@dataclass(frozen=True)
class FoundDisk:
    """A device that discovery accepts, with the facts the inventory keeps about it."""

    device_path: str
    serial: str | None
    model: str | None
    transport: str | None
    size_bytes: int
    rotational: bool
    mount_point: str
    fs_type: str | None
    fs_label: str | None
    detected_class: str


@dataclass(frozen=True)
class IgnoredDevice:
    device_path: str
    reason: str


def flatten(lsblk: dict[str, Any]) -> list[dict[str, Any]]:
    """Every device of lsblk's tree (disks, their partitions, …) as one flat list."""
    out: list[dict[str, Any]] = []
    stack = list(reversed(lsblk.get("blockdevices") or []))
    while stack:
        device = stack.pop()
        out.append(device)
        stack.extend(reversed(device.get("children") or []))
    return out


def _flag(value: Any) -> bool:
    """lsblk prints booleans as true/false, 0/1 or "0"/"1" depending on its version."""
    return value in (True, 1, "1", "true")


def _mount_point(device: dict[str, Any]) -> str | None:
    """The first mount point; newer lsblk lists all of them in ``mountpoints``."""
    if device.get("mountpoint"):
        return device["mountpoint"]
    return next((m for m in device.get("mountpoints") or [] if m), None)


def detect_class(device: dict[str, Any]) -> str:
    """nvme by transport or name, else ssd when not rotational, else hdd."""
    if device.get("tran") == "nvme" or str(device.get("name", "")).startswith("nvme"):
        return "nvme"
    return "hdd" if _flag(device.get("rota")) else "ssd"


def is_below(path: str, root: str) -> bool:
    """True when ``path`` lies strictly inside directory ``root`` (after normalising both)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return root != "/" and path.startswith(root.rstrip("/") + "/")


def rejection(device: dict[str, Any], disk_root: str) -> str | None:
    """Why discovery must not take ``device``, or None when it is a disk prepared for Spindle."""
    mount = _mount_point(device)
    label = device.get("label") or ""
    if device.get("type") not in BLOCK_TYPES:
        return f"device type {device.get('type')!r} is not a disk, partition or loop device"
    if mount in SYSTEM_MOUNTS or (mount and not mount.startswith("/")):
        return f"mounted on system path {mount}"
    below_root = mount is not None and is_below(mount, disk_root)
    if not label.startswith(SPINDLE_LABEL_PREFIX) and not below_root:
        return f"neither labelled {SPINDLE_LABEL_PREFIX}* nor mounted below {disk_root}"
    if not mount:
        return "prepared for Spindle but not mounted"
    if not below_root:
        return f"mounted at {mount}, outside this node's disk root {disk_root}: another node's disk"
    return None


def discover(lsblk: dict[str, Any], disk_root: str) -> tuple[list[FoundDisk], list[IgnoredDevice]]:
    """Split lsblk's devices into Spindle disks and ignored devices (with the reason)."""
    found: list[FoundDisk] = []
    ignored: list[IgnoredDevice] = []
    for device in flatten(lsblk):
        path = device.get("path") or f"/dev/{device.get('name')}"
        reason = rejection(device, disk_root)
        if reason:
            ignored.append(IgnoredDevice(path, reason))
            continue
        found.append(FoundDisk(
            device_path=path,
            serial=device.get("serial") or None,
            model=(device.get("model") or "").strip() or None,
            transport=device.get("tran") or None,
            size_bytes=int(device.get("size") or 0),
            rotational=_flag(device.get("rota")),
            mount_point=posixpath.normpath(_mount_point(device) or ""),
            fs_type=device.get("fstype") or None,
            fs_label=device.get("label") or None,
            detected_class=detect_class(device),
        ))
    return found, ignored


def admin_class(disk: FoundDisk, overrides: Mapping[str, str]) -> str | None:
    """The class the admin set for this disk, keyed by label, mount point, device path or serial."""
    return next((overrides[k] for k in (disk.fs_label, disk.mount_point, disk.device_path, disk.serial)
                 if k and k in overrides), None)
