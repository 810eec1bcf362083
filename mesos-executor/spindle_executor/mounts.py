"""Every host path bind-mounted into a container lies on a filesystem mounted ``nosuid,nodev``: a
setuid binary or a device node a tenant leaves there is inert for the node's other accounts.

A dedicated disk is its own mount (``noatime,nosuid,nodev`` by node-agent and disk-service); one
mounted otherwise is remounted with ``nosuid,nodev`` before it is given. The executor's own sandbox
folders (a job's files, a member's rendered config files) are covered by ``deploy/up``, which makes
the agent's work dir its own ``nosuid,nodev`` mount; where that was not done (a node set up some
other way) the folder is bound onto itself with those flags, and unbound when its task ends.
Whatever cannot be made so is refused (``LaunchFailed``)."""
import logging
import os
import subprocess
from dataclasses import dataclass

log = logging.getLogger("spindle.executor.mounts")

REQUIRED = ("nosuid", "nodev")
MOUNTINFO = "/proc/self/mountinfo"


@dataclass(frozen=True)
class MountPoint:
    target: str
    options: frozenset[str]  # the per-mount options (nosuid, nodev, ro, …)


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parse_mountinfo(text: str) -> list[MountPoint]:
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 6:
            mounts.append(MountPoint(_unescape(fields[4]), frozenset(fields[5].split(","))))
    return mounts


def mount_of(path: str, mounts: list[MountPoint] | None = None) -> MountPoint:
    """The mount ``path`` is on: the last-mounted one with the longest target containing it."""
    if mounts is None:
        with open(MOUNTINFO) as f:
            mounts = parse_mountinfo(f.read())
    real = os.path.realpath(path)
    best: MountPoint | None = None
    for mount in mounts:  # in mount order: a later mount on the same target hides an earlier one
        inside = real == mount.target or real.startswith(mount.target.rstrip("/") + "/")
        if inside and (best is None or len(mount.target) >= len(best.target)):
            best = mount
    assert best is not None  # "/" contains every path
    return best


def missing_options(path: str, mounts: list[MountPoint] | None = None) -> list[str]:
    """Which of nosuid, nodev the filesystem under ``path`` is mounted without."""
    options = mount_of(path, mounts).options
    return [o for o in REQUIRED if o not in options]


class NotHardened(Exception):
    """A path could not be put on a nosuid,nodev mount; the message says which and why."""


def _mount(*args: str) -> None:
    result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise NotHardened(f"mount {' '.join(args)} failed: {result.stderr.strip() or result.returncode}")


def ensure_disk(path: str) -> None:
    """A dedicated disk (a mount point) mounted nosuid,nodev: remounted so when it is not."""
    missing = missing_options(path)
    if missing:
        log.warning("disk %s is mounted without %s: remounting it", path, ",".join(missing))
        _mount("-o", "remount,nosuid,nodev", path)
        missing = missing_options(path)
    if missing:
        raise NotHardened(f"disk {path} is mounted without {','.join(missing)}")


def ensure_folder(path: str) -> bool:
    """A folder of the executor's own (in its sandbox) on a nosuid,nodev mount; True when it had to
    be bound onto itself for that (``release_folder`` unbinds it)."""
    if not missing_options(path):
        return False
    _mount("--bind", path, path)
    try:
        _mount("-o", "remount,bind,nosuid,nodev", path)
    except NotHardened:
        release_folder(path)
        raise
    if missing_options(path):
        release_folder(path)
        raise NotHardened(f"{path} could not be made nosuid,nodev")
    return True


def release_folder(path: str) -> None:
    result = subprocess.run(["umount", "-l", path], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        log.warning("could not unbind %s: %s", path, result.stderr.strip())
