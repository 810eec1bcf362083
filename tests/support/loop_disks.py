"""Real disks for tests: a sparse file on a direct-I/O loop device, XFS labelled ``spdl-…`` (what
disk-service and the node agent take for a Spindle disk), mounted; unmounted and detached after."""
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def sh(*command: str) -> str:
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


@contextmanager
def loop_disk(image: Path, mount: Path, size_mib: int = 512) -> Iterator[dict[str, str]]:
    """The disk (``image`` its backing file) mounted at ``mount``: its device, disk root (the
    mount's parent), mount point and label."""
    mount.mkdir(parents=True, exist_ok=True)
    with open(image, "wb") as f:
        f.truncate(size_mib << 20)
    device = sh("losetup", "--direct-io=on", "--find", "--show", str(image))
    label = f"spdl-{uuid.uuid4().hex[:7]}"
    try:
        sh("mkfs.xfs", "-q", "-L", label, device)
        sh("mount", device, str(mount))
        yield {"device": device, "root": str(mount.parent), "mount": str(mount), "label": label}
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
        sh("losetup", "-d", device)
