"""Network isolation of one container (``spindle_common.isolation``): its packet filter, installed in
its network namespace the moment it starts and kept in step with its cluster's peers for its life.

The rules come from the orchestrator (``TaskData.isolation.peers_url``, a long poll) and go in with
``nsenter --net`` + ``iptables-restore`` (the whole ``filter`` table, atomically): the executor runs
as root on its node, the container has no ``NET_ADMIN`` to undo them. A container whose filter
cannot be installed does not run. Until the orchestrator answers, the container gets a filter that
lets only itself in as a peer (every private address, hence every tenant, refused outwards)."""
import logging
import os
import subprocess
import threading
from urllib.parse import urlsplit

from docker.models.containers import Container

from spindle_common.clients import ServiceClient
from spindle_common.errors import ApiError
from spindle_common.isolation import PeerSet, rules
from spindle_executor.container import container_pid
from spindle_executor.task_spec import TaskContainer

log = logging.getLogger("spindle.executor.isolation")
TOKEN_ENV = "SPINDLE_INTERNAL_TOKEN"
# Seconds the orchestrator may hold a poll open, and to wait after a failed one.
POLL_WAIT_S, RETRY_S = 25.0, 2.0
FIRST_ANSWER_TIMEOUT_S = 5.0


class IsolationFailed(Exception):
    """The container's filter could not be installed (the message says why)."""


def install(pid: int, table: str) -> None:
    """Replace the ``filter`` table of process ``pid``'s network namespace."""
    try:
        done = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "iptables-restore"], input=table,
                              capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IsolationFailed(f"iptables-restore could not run: {exc}") from exc
    if done.returncode != 0:
        raise IsolationFailed(f"iptables-restore failed ({done.returncode}): {done.stderr.strip()[:500]}")


class Isolation:
    """The filter of one container and the thread that follows its cluster's peers."""

    def __init__(self, spec: TaskContainer, container: Container):
        assert spec.isolation is not None and spec.ip
        self.spec, self.container = spec, container
        url = urlsplit(spec.isolation.peers_url)
        self.client = ServiceClient(f"{url.scheme}://{url.netloc}", os.environ.get(TOKEN_ENV, ""),
                                    actor=f"executor:{spec.task_id}", role="node", timeout=POLL_WAIT_S + 10)
        self.path = url.path
        self.current = PeerSet(cluster_id=spec.cluster_id, peers=[spec.ip], tenant_ranges=[])
        self.pid = 0
        self.stopped = threading.Event()

    def _fetch(self, wait: float) -> PeerSet:
        answer = self.client.request("GET", self.path, params={"known": self.current.version, "wait": wait},
                                     timeout=wait + 10 if wait else FIRST_ANSWER_TIMEOUT_S)
        peers = PeerSet.model_validate(answer)
        # Itself always (a member's address is recorded before it starts; this is belt and braces).
        return peers.model_copy(update={"peers": sorted({*peers.peers, self.spec.ip})})

    def _install(self, peers: PeerSet) -> None:
        install(self.pid, rules(peers.peers, peers.tenant_ranges, peers.platform, peers.kdc))
        self.current = peers

    def start(self) -> bool:
        """Install the first filter (raises ``IsolationFailed``), then follow the peers; False when
        the container has already ended (a driver that exits at once: its end is reported as such)."""
        pid = container_pid(self.container)
        if pid is None:
            self.client.close()
            return False
        self.pid = pid
        try:
            peers = self._fetch(0)
        except (ApiError, ValueError) as exc:
            log.warning("task %s: the cluster's peers are unknown for now (%s): only itself until they are",
                        self.spec.task_id, exc)
            peers = self.current
        try:
            self._install(peers)
        except IsolationFailed:
            # A driver that printed one line and exited may be gone before its filter went in: its
            # namespace went with it, and its end (exit code, logs) is what it reports.
            if container_pid(self.container) != pid:
                log.info("task %s: ended before its filter went in", self.spec.task_id)
                self.client.close()
                return False
            raise
        log.info("task %s: isolated (%d peers)", self.spec.task_id, len(peers.peers))
        threading.Thread(target=self._follow, daemon=True, name=f"isolation-{self.spec.task_id}").start()
        return True

    def stop(self) -> None:
        self.stopped.set()

    def _follow(self) -> None:
        while not self.stopped.is_set():
            try:
                peers = self._fetch(POLL_WAIT_S)
                if self.stopped.is_set():
                    break
                if peers.version != self.current.version:
                    self._install(peers)
                    log.info("task %s: peers now %s", self.spec.task_id, ", ".join(peers.peers))
            except (ApiError, ValueError, IsolationFailed) as exc:
                if self.stopped.is_set():
                    break
                if isinstance(exc, ApiError) and exc.status == 404:  # the cluster is gone: nothing to follow
                    break
                log.warning("task %s: following the cluster's peers: %s", self.spec.task_id, exc)
                self.stopped.wait(RETRY_S)
        self.client.close()


def isolate(spec: TaskContainer, container: Container) -> Isolation | None:
    """Install the container's filter when its task asks for isolation (None when it does not, or
    when the container has already ended)."""
    if spec.isolation is None or not spec.ip:
        return None
    isolation = Isolation(spec, container)
    return isolation if isolation.start() else None
