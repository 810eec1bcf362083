"""Wiping released disks in the background: ``wiping`` → fresh filesystem → ``free`` (or ``failed``).

Disks of this machine are wiped here, in a small thread pool, after checking that the device still
is the Spindle disk the inventory knows (same mount point, below the node's disk root).
Remote nodes wipe their own disks (``spindle-node-agent``, with the same :func:`wipe_device`) and
report the outcome (``POST /disks/{id}/wipe-result``).
"""
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.db import session_factory
from spindle_disk import blockdev, discovery, inventory, transitions
from spindle_disk.core.config import Settings
from spindle_disk.models import Disk, Node
from spindle_disk.states import FAILED, FREE, WIPING

log = logging.getLogger("spindle.disk.wipe")
WIPER_ACTOR = "disk-service/wipe"


def is_local(node: Node, settings: Settings) -> bool:
    """Whether ``node`` is this machine (so disk-service itself runs lsblk and wipes)."""
    return node.address in settings.local_node_addresses


def local_only(session: Session, disk_ids: list[int], settings: Settings) -> list[int]:
    """Those of ``disk_ids`` on this machine: the only disks this process wipes (a remote node wipes
    its own and reports), so the others need no background job at all."""
    if not disk_ids:
        return []
    return list(session.scalars(select(Disk.id).join(Node, Node.id == Disk.node_id).where(
        Disk.id.in_(disk_ids), Node.address.in_(settings.local_node_addresses)).order_by(Disk.id)))


def device_mismatch(device_path: str, mount_point: str, disk_root: str) -> str | None:
    """Why the device at ``device_path`` is not (any more) the Spindle disk mounted on ``mount_point``
    below ``disk_root`` that we are about to wipe; None when it still is. Runs lsblk on this machine."""
    try:
        devices = discovery.flatten(blockdev.lsblk(device_path))
    except (blockdev.CommandFailed, ValueError) as exc:
        return f"cannot inspect {device_path}: {exc}"
    found, ignored = discovery.discover({"blockdevices": devices[:1]}, disk_root)
    if ignored:
        return f"{device_path} is no Spindle disk: {ignored[0].reason}"
    if found[0].mount_point != mount_point:
        return f"{device_path} is mounted on {found[0].mount_point}, not {mount_point}"
    return None


def wipe_device(device_path: str, mount_point: str, fs_type: str | None, fs_label: str | None, disk_root: str,
                timeout: float) -> str | None:
    """Wipe one disk of this machine: check it still is the disk the inventory knows, then make a fresh
    filesystem with the same label and mount it back. None when wiped, else why not. disk-service's
    wiper (its own machine's disks) and spindle-node-agent (its node's disks) both wipe with this."""
    reason = device_mismatch(device_path, mount_point, disk_root)
    if reason is None:
        try:
            blockdev.reformat(device_path, mount_point, fs_type or "", fs_label, timeout)
        except blockdev.CommandFailed as exc:
            reason = str(exc)
    return reason


def finish(session: Session, disk_id: int, ok: bool, reason: str | None, actor: str) -> None:
    """Record a wipe's outcome: ``wiping`` → ``free``, or → ``failed`` with the reason."""
    disk = inventory.disk_or_404(session, disk_id, lock=True)
    transitions.move(session, disk, FREE if ok else FAILED, actor, reason=None if ok else reason)
    session.commit()


class Wiper:
    """Runs local wipes on a thread pool; each wipe uses its own database session."""

    def __init__(self, settings: Settings, resume: bool = True):
        self.settings = settings
        self._pool = ThreadPoolExecutor(max_workers=settings.wipe_workers, thread_name_prefix="wipe")
        self._in_flight: set[int] = set()
        self._lock = threading.Lock()
        if resume:
            self._pool.submit(self._logged, self.resume)

    def submit(self, disk_ids: list[int]) -> list[Future]:
        return [self._pool.submit(self._logged, self.wipe, disk_id) for disk_id in disk_ids]

    @staticmethod
    def _logged(job, *args) -> None:
        try:
            job(*args)
        except Exception:  # a background job has no caller to raise to
            log.exception("wipe job %s%s failed", job.__name__, args)

    def resume(self) -> None:
        """Wipe again whatever a previous process left in ``wiping`` (a crash mid-wipe)."""
        with session_factory(self.settings.database_url)() as session:
            pending = session.execute(select(Disk.id, Node).join(Node, Node.id == Disk.node_id)
                                      .where(Disk.state == WIPING)).all()
        self.submit([disk_id for disk_id, node in pending if is_local(node, self.settings)])

    def wipe(self, disk_id: int) -> None:
        """Wipe one local disk in state ``wiping`` (once at a time); a remote node's disk is left to its node."""
        with self._lock:
            if disk_id in self._in_flight:
                return
            self._in_flight.add(disk_id)
        try:
            self._wipe(disk_id)
        finally:
            with self._lock:
                self._in_flight.discard(disk_id)

    def _wipe(self, disk_id: int) -> None:
        with session_factory(self.settings.database_url)() as session:
            disk = inventory.disk_or_404(session, disk_id)
            node = session.get(Node, disk.node_id)
            if node is None:  # disks.node_id is a foreign key (deleting a node deletes its disks)
                raise RuntimeError(f"disk {disk_id} has no node {disk.node_id}")
            if disk.state != WIPING or not is_local(node, self.settings):
                return
            reason = wipe_device(disk.device_path, disk.mount_point, disk.fs_type, disk.fs_label, node.disk_root,
                                 self.settings.wipe_command_timeout)
            session.rollback()
            finish(session, disk_id, reason is None, reason and f"wipe failed: {reason}", WIPER_ACTOR)
            log.info("wiped disk %s: %s", disk_id, "ok" if reason is None else reason)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
