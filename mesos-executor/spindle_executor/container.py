"""Create, check and remove a member's (or a job driver's) container through the Docker Engine API."""
import logging
import os
import socket
import time
from pathlib import PurePosixPath
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.types import EndpointConfig, LogConfig, Mount, NetworkingConfig

from spindle_common.contracts import MEMBER_LABEL, OWNED_LABEL, TASK_LABEL, HealthCheckSpec
from spindle_common.files import files_archive
from spindle_executor import mounts
from spindle_executor.announce import announce
from spindle_executor.job import sandbox
from spindle_executor.task_spec import TaskContainer

log = logging.getLogger("spindle.executor.container")


class LaunchFailed(Exception):
    """The container could not be started or never became healthy; the message is the reason."""


def _check_disks(spec: TaskContainer) -> None:
    for host_path, container_path in spec.mounts:
        if not os.path.ismount(host_path):
            raise LaunchFailed(f"disk {host_path} is not mounted on this node, cannot give it to {container_path}")
        try:
            mounts.ensure_disk(host_path)
        except mounts.NotHardened as exc:
            raise LaunchFailed(f"disk {host_path} cannot be given to {container_path}: {exc}") from None


# Folders of this executor bound onto themselves nosuid,nodev, by task: unbound when the task's
# container is removed.
_bound: dict[str, list[str]] = {}


def _harden_folder(task_id: str, path: str) -> None:
    try:
        if mounts.ensure_folder(path):
            _bound.setdefault(task_id, []).append(path)
    except mounts.NotHardened as exc:
        raise LaunchFailed(f"{path} cannot be given to the container: {exc}") from None


def _release_folders(task_id: str) -> None:
    for path in _bound.pop(task_id, []):
        mounts.release_folder(path)


def _file_binds(spec: TaskContainer) -> list[tuple[str, str, bool]]:
    """A read-only root cannot take the config files through the archive API: they are written
    into the sandbox (``files/``) and each is bound read-only at its path."""
    if not (spec.files and spec.security.read_only_root):
        return []
    folder = sandbox() / "files" / spec.task_id
    binds = []
    for path, content in spec.files.items():
        relative = PurePosixPath(path).relative_to("/")
        if ".." in relative.parts:
            raise LaunchFailed(f"config file {path} is not a plain absolute path")
        host = folder / relative
        host.parent.mkdir(parents=True, exist_ok=True)
        host.write_text(content)
        host.chmod(0o644)
        binds.append((str(host), path, True))
    _harden_folder(spec.task_id, str(folder))
    return binds


def _prepare_binds(spec: TaskContainer) -> list[tuple[str, str, bool]]:
    """Every bind mount of the container, each on a nosuid,nodev filesystem; the disks owned by the
    container's user when it is not root (they come fresh from a wipe, owned by root)."""
    _check_disks(spec)
    if spec.is_job and spec.job_dir:
        _harden_folder(spec.task_id, spec.job_dir)
    owner = spec.security.uid_gid
    if owner and owner != (0, 0):
        for host_path, _ in spec.mounts:
            os.chown(host_path, *owner)
    return spec.binds + _file_binds(spec)


def hardening(spec: TaskContainer) -> dict[str, Any]:
    """The Docker host-config settings every container gets (``docs/ARCHITECTURE.md``, "Containers")."""
    security = spec.security
    settings: dict[str, Any] = {
        "cap_drop": ["ALL"],
        "cap_add": list(security.cap_add) or None,
        "security_opt": ["no-new-privileges"],
        "pids_limit": security.pids_limit,
        # Docker's init (tini) as PID 1: it reaps the orphans of any process inside (a product's
        # own PID 1 rarely does, and unreaped zombies would hold the pids limit forever) and
        # passes SIGTERM on, so a stop is a graceful one.
        "init": True,
        "log_config": LogConfig(type=LogConfig.types.JSON, config=dict(LOG_OPTIONS)),
        "read_only": security.read_only_root,
        "sysctls": dict(NEIGHBOUR_SYSCTLS) if spec.network else None,  # no network: no eth0
    }
    if security.read_only_root:
        size = max(TMPFS_MIN_MB, spec.mem_mb // 4)
        # exec: the JVM loads native libraries it unpacks there (zstd-jni, snappy); never suid or devices
        settings["tmpfs"] = {"/tmp": f"rw,exec,nosuid,nodev,mode=1777,size={size}m"}
    return settings


# A peer whose node died answers nothing, not even a refusal. With Linux's defaults a connection to it
# goes out on the neighbour entry last confirmed (reachable for 15 to 45 s, then 5 s before a probe)
# while TCP resends its SYN (after 1, 3, 7, 15, 31 s): a DataNode writing to a lost one waited up to
# its 60 s socket timeout (measured on three simulated nodes). Entries reachable for 2.5 to 7.5 s and
# probed after 1 s find the peer gone, and fail the connection (EHOSTUNREACH), within about 20 s.
# Namespaced: they change only the container's own network namespace, on its one interface (a network
# namespace other than the host's has no ``neigh/default``).
NEIGHBOUR_SYSCTLS = {"net.ipv4.neigh.eth0.base_reachable_time_ms": "5000",
                     "net.ipv4.neigh.eth0.delay_first_probe_time": "1"}
# json-file logs of every container: at most 3 files of 10 MB.
LOG_OPTIONS = {"max-size": "10m", "max-file": "3"}
# A read-only root's /tmp: in RAM, counted in the container's memory; a quarter of it, at least 64 MB.
TMPFS_MIN_MB = 64


def create_and_start(client: docker.DockerClient, spec: TaskContainer) -> Container:
    """Start the member's container: limits, dedicated disks at /data/N, floating IP, config files."""
    try:
        binds = _prepare_binds(spec)
    except OSError as exc:
        _release_folders(spec.task_id)
        raise LaunchFailed(f"the container's mounts could not be prepared: {exc}") from exc
    except LaunchFailed:
        _release_folders(spec.task_id)
        raise
    _remove_stopped_incarnation(client, spec)
    networking = None
    if spec.network:
        endpoint = EndpointConfig(version=client.api._version, ipv4_address=spec.ip)
        networking = NetworkingConfig({spec.network: endpoint})
    try:
        try:
            container_id = _create(client, spec, networking, binds)
        except ImageNotFound:
            if not pull_from_registry(client, spec.image):
                raise
            container_id = _create(client, spec, networking, binds)
        container = client.containers.prepare_model({"Id": container_id})  # no inspect: it is read when checked
        if spec.files and not spec.security.read_only_root:
            container.put_archive("/", files_archive(spec.files))
        container.start()
    except ImageNotFound:  # create_container never pulls: images come from the node or the registry
        where = f" nor in the registry {os.environ[REGISTRY_ENV]}" if os.environ.get(REGISTRY_ENV) else ""
        raise LaunchFailed(f"image {spec.image} is not on this node{where}") from None
    except APIError as exc:
        remove(client, spec.task_id)
        raise LaunchFailed(f"docker refused the container: {exc.explanation or exc}") from exc
    if spec.network and spec.ip:
        _announce_address(container, spec.network, spec.ip)
    return container


def _remove_stopped_incarnation(client: docker.DockerClient, spec: TaskContainer) -> None:
    """Free the member's container name from an earlier incarnation of the same member that is no
    longer running: a node that died with its containers and came back still has them (stopped)
    until its node agent sweeps them, and a replacement placed there meanwhile would be refused the
    name. A running one is left alone: Docker refuses the new container and the launch fails."""
    try:
        old = client.containers.get(spec.container_name)
    except NotFound:
        return
    if old.labels.get(MEMBER_LABEL) == spec.member_id and old.labels.get(TASK_LABEL) != spec.task_id \
            and old.status != "running":
        log.info("removing %s's stopped container of task %s (%s)", spec.member_id, old.labels.get(TASK_LABEL),
                 old.status)
        remove(client, old.labels[TASK_LABEL])


def container_pid(container: Container) -> int | None:
    """The container's main process (its attributes read again), None once it has ended (no
    namespace left to enter)."""
    try:
        container.reload()
    except NotFound:
        return None
    pid = int(container.attrs["State"]["Pid"])
    return pid if pid > 0 else None


def _announce_address(container: Container, network: str, ip: str) -> None:
    """The floating IP announced from the container (``announce``: it may have been on another node a
    moment ago). Nothing when the container has already ended: the health check says why."""
    try:
        pid = container_pid(container)
        mac = container.attrs["NetworkSettings"]["Networks"][network]["MacAddress"]
    except (APIError, KeyError, TypeError, ValueError):
        return
    if pid and mac:
        announce(pid, mac, ip)


# The nodes' image registry (host:port); a node that lacks a member's image pulls it from there.
REGISTRY_ENV = "SPINDLE_REGISTRY"


def pull_from_registry(client: docker.DockerClient, image: str) -> bool:
    """Pull ``image`` as ``<registry>/<image>`` and tag it ``image``; False when there is no
    registry or it does not have the image."""
    registry = os.environ.get(REGISTRY_ENV, "").strip()
    if not registry:
        return False
    repository, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
    try:
        pulled = client.images.pull(f"{registry}/{repository}", tag=tag)
    except (ImageNotFound, NotFound):
        return False
    except APIError as exc:
        raise LaunchFailed(f"pulling {image} from {registry} failed: {exc.explanation or exc}") from exc
    pulled.tag(repository, tag)
    return True


def _create(client: docker.DockerClient, spec: TaskContainer, networking: NetworkingConfig | None,
            binds: list[tuple[str, str, bool]]) -> str:
    return client.api.create_container(
        spec.image,
        command=spec.command,
        name=spec.container_name,
        hostname=spec.hostname,
        user=spec.security.user,
        environment=spec.env,
        labels=spec.labels,
        working_dir=spec.working_dir,
        networking_config=networking,
        host_config=client.api.create_host_config(
            nano_cpus=spec.nano_cpus,
            mem_limit=f"{spec.mem_mb}m",
            cpuset_cpus=spec.cpuset,
            network_mode=spec.network or "none",
            mounts=[Mount(target=target, source=source, type="bind", read_only=read_only)
                    for source, target, read_only in binds],
            **hardening(spec),
        ),
    )["Id"]


def _tcp_open(ip: str, port: int) -> bool:
    try:
        with socket.create_connection((ip, port), timeout=1):
            return True
    except OSError:
        return False


def _interval(health: HealthCheckSpec | None) -> float:
    """Seconds between checks: a TCP connect is cheap, an exec in the container is not."""
    if health is None:
        return 0.2
    return health.interval_seconds or (0.5 if health.command else 0.1)


# Seconds between two looks at the container's state while its health check has not passed: an
# inspection costs the executor and dockerd about 3.5 ms of CPU, a refused TCP connect 0.08 ms (measured),
# so the check runs every _interval and the container is looked at once a second (its first look at once).
LOOK_EVERY_S = 1.0


def wait_healthy(container: Container, health: HealthCheckSpec | None, ip: str | None) -> None:
    """Return once the health check passes; raise LaunchFailed if the container dies or time runs out."""
    deadline = time.monotonic() + (health.timeout_seconds if health else 30)
    last = "no check has run yet"
    next_look = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() >= next_look:
            container.reload()
            next_look = time.monotonic() + LOOK_EVERY_S
            if container.status in ("exited", "dead"):
                logs = container.logs(tail=5).decode(errors="replace").strip()
                raise LaunchFailed(f"container exited with code {container.attrs['State']['ExitCode']}: {logs}")
        if health is None:
            if container.status == "running":
                return
        elif health.command:
            try:
                result = container.exec_run(health.command)
            except APIError:  # the container stopped between a look and the exec: the next look says why
                next_look = 0.0
                continue
            if result.exit_code == 0:
                return
            last = f"health command exited {result.exit_code}"
        else:
            assert health.tcp_port is not None  # HealthCheckSpec: a check without a command has a tcp_port
            if ip and _tcp_open(ip, health.tcp_port):
                return
            last = f"port {health.tcp_port} not accepting"
        time.sleep(_interval(health))
    raise LaunchFailed(f"health check did not pass within {health.timeout_seconds if health else 30:.0f}s ({last})")


def remove(client: docker.DockerClient, task_id: str) -> int:
    """Stop and remove every container of ``task_id``; returns how many there were."""
    containers = client.containers.list(all=True, filters={"label": [f"{TASK_LABEL}={task_id}", f"{OWNED_LABEL}=true"]})
    for container in containers:
        try:
            container.remove(force=True)
        except NotFound:
            pass
    _release_folders(task_id)
    return len(containers)
