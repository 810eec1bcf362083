"""Commands on this machine's block devices: lsblk, and the unmount → mkfs → mount of a wipe."""
import json
import subprocess
import time
from typing import Any

from spindle_disk.discovery import LSBLK_COMMAND, flatten

MKFS = {
    "xfs": lambda device, label: ["mkfs.xfs", "-f", "-q", *(["-L", label] if label else []), device],
    "ext4": lambda device, label: ["mkfs.ext4", "-F", "-q", *(["-L", label] if label else []), device],
}


class CommandFailed(Exception):
    """A block-device command exited non-zero; the message names it and quotes its error output."""


# How a Spindle data disk is mounted: a tenant's files there can never act as setuid programs or
# device nodes for anyone on the host.
MOUNT_OPTIONS = "noatime,nosuid,nodev"


# A device just unmounted here can stay busy for a moment: a mount namespace being set up holds a
# copy of every mount (runc makes one for each container it starts, on any node, and drops the
# copies once the container's root is in place), and mkfs's exclusive open then fails. That is
# waited out, for this long; a device still busy after it has a real holder and the wipe fails.
BUSY_GRACE_S = 10.0
BUSY = ("Device or resource busy", "apparently in use by the system")


def run(command: list[str], timeout: float) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandFailed(f"{command[0]}: {exc}") from exc
    if done.returncode != 0:
        raise CommandFailed(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return done.stdout


def lsblk(device: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """This machine's ``lsblk --json`` (of one device when given), filesystem facts filled in.

    Without udev (containers, minimal hosts) lsblk leaves FSTYPE and LABEL empty; ``blkid -p``
    reads them from the device itself.
    """
    output = json.loads(run(LSBLK_COMMAND + ([device] if device else []), timeout))
    for item in flatten(output):
        if not item.get("fstype") and item.get("path") and int(item.get("size") or 0) > 0:
            probed = blkid(item["path"], timeout)
            item["fstype"] = probed.get("TYPE")
            item["label"] = item.get("label") or probed.get("LABEL")
    return output


def blkid(device: str, timeout: float = 30.0) -> dict[str, str]:
    """Low-level probe of ``device``'s filesystem (TYPE, LABEL, UUID…); empty when it has none."""
    try:
        output = run(["blkid", "-p", "-o", "export", device], timeout)
    except CommandFailed:  # exit 2: nothing found on the device
        return {}
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def reformat(device: str, mount_point: str, fs_type: str, label: str | None, timeout: float) -> None:
    """Unmount ``device``, make a fresh ``fs_type`` filesystem with the same label, mount it back."""
    if fs_type not in MKFS:
        raise CommandFailed(f"cannot wipe a {fs_type or 'unknown'} filesystem (only {', '.join(MKFS)})")
    run(["umount", mount_point], timeout)
    deadline = time.monotonic() + BUSY_GRACE_S
    while True:
        try:
            run(MKFS[fs_type](device, label), timeout)
            break
        except CommandFailed as exc:
            if not any(sign in str(exc) for sign in BUSY) or time.monotonic() >= deadline:
                raise
        time.sleep(0.1)
    run(["mount", "-o", MOUNT_OPTIONS, device, mount_point], timeout)
