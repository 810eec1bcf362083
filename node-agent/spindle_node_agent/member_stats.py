"""Each node's member figures for the time-series database: ``spindle-member-stats``, one per node.

Every ``SPINDLE_MEMBER_STATS_INTERVAL_S`` it reads, for every running Spindle container on this node's
dockerd (members and job drivers: the ``io.spindle.*`` labels), Docker's one-shot statistics — CPU
seconds, memory in use (without the reclaimable page cache, as ``docker stats`` shows it), network bytes —
and, for each dedicated disk bound at ``/data/N``, the bytes used and its size from the host's mount
and the bytes read and written from its device's counters. It pushes them to VictoriaMetrics
(``/api/v1/import/prometheus``, basic auth with the metrics token), labelled ``cluster``, ``member``,
``node`` (and ``disk`` for disk figures): the same ids the API knows, so the api-server can ask for
one cluster's members only.

| variable | default | meaning |
|---|---|---|
| ``SPINDLE_NODE_NAME`` | required | this node's name (label ``node``) |
| ``SPINDLE_METRICS_URL`` | ``http://127.0.0.1:8428`` | VictoriaMetrics |
| ``SPINDLE_METRICS_TOKEN`` | the development token | its basic-auth password (user ``spindle``) |
| ``SPINDLE_MEMBER_STATS_INTERVAL_S`` | ``15`` | seconds between two pushes |
| ``DOCKER_HOST`` | Docker's default | this node's dockerd |
"""
import logging
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import docker
import requests
from docker.errors import DockerException
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from spindle_common.contracts import CLUSTER_LABEL, JOB_LABEL, MEMBER_LABEL, OWNED_LABEL
from spindle_common.metrics import DEV_METRICS_TOKEN

log = logging.getLogger("spindle.member_stats")
METRICS_USER = "spindle"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SPINDLE_", extra="ignore")

    node_name: str = Field(min_length=1, max_length=253, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    metrics_url: str = "http://127.0.0.1:8428"
    metrics_token: str = DEV_METRICS_TOKEN
    member_stats_interval_s: float = Field(default=15.0, gt=0, le=3600)
    log_level: str = "info"


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def line(name: str, labels: dict[str, str], value: float) -> str:
    """One sample in Prometheus' text format."""
    rendered = ",".join(f'{key}="{_label_value(val)}"' for key, val in labels.items())
    return f"{name}{{{rendered}}} {value if isinstance(value, int) else repr(float(value))}"


def memory_in_use(memory: dict[str, Any]) -> int:
    """What ``docker stats`` shows: usage without the inactive page cache (cgroup v1 or v2)."""
    usage = int(memory.get("usage") or 0)
    stats = memory.get("stats") or {}
    cache = stats.get("total_inactive_file", stats.get("inactive_file", 0))
    return max(0, usage - int(cache or 0))


@dataclass(frozen=True)
class DedicatedDisk:
    """A dedicated disk as bound into a member: where (``/data/N``), its bytes used and size, and the
    bytes read from and written to its whole device since the device appeared."""

    target: str
    used: int
    size: int
    read: int
    written: int


def device_bytes(stat_line: str) -> tuple[int, int]:
    """Bytes read and written from a block device's ``/sys/dev/block/M:m/stat`` line (sectors of
    512 bytes are its 3rd and 7th fields, whatever the device's own sector size)."""
    fields = stat_line.split()
    return int(fields[2]) * 512, int(fields[6]) * 512


def member_lines(stats: dict[str, Any], labels: dict[str, str], disks: Iterable[DedicatedDisk] = ()) -> list[str]:
    """The samples of one container: its Docker statistics (CPU, memory, network) and its dedicated
    disks: use, size, and I/O. A member's disk I/O is its dedicated disks' device counters: the disks
    are whole devices of its own, and (unlike a cgroup's blkio figures, which on cgroup v1 miss the
    writeback of buffered writes) they count every byte that reached them."""
    lines = [line("spindle_member_cpu_seconds_total", labels,
                  int(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9),
             line("spindle_member_memory_bytes", labels, memory_in_use(stats.get("memory_stats") or {}))]
    limit = (stats.get("memory_stats") or {}).get("limit")
    if limit:
        lines.append(line("spindle_member_memory_limit_bytes", labels, int(limit)))
    networks = (stats.get("networks") or {}).values()
    lines += [line("spindle_member_network_receive_bytes_total", labels, sum(n.get("rx_bytes", 0) for n in networks)),
              line("spindle_member_network_transmit_bytes_total", labels,
                   sum(n.get("tx_bytes", 0) for n in networks))]
    for disk in disks:
        on_disk = {**labels, "disk": disk.target}
        lines += [line("spindle_member_disk_used_bytes", on_disk, disk.used),
                  line("spindle_member_disk_size_bytes", on_disk, disk.size),
                  line("spindle_member_disk_read_bytes_total", on_disk, disk.read),
                  line("spindle_member_disk_written_bytes_total", on_disk, disk.written)]
    return lines


def dedicated_disks(attrs: dict[str, Any], sys_root: str = "/sys") -> list[DedicatedDisk]:
    """Every dedicated disk bound into the container (``/data/N``), from the host's mount of it."""
    disks = []
    for mount in attrs.get("Mounts") or []:
        target = mount.get("Destination", "")
        if not target.startswith("/data/"):
            continue
        try:
            st = os.statvfs(mount["Source"])
            dev = os.stat(mount["Source"]).st_dev
            with open(f"{sys_root}/dev/block/{os.major(dev)}:{os.minor(dev)}/stat") as stat:
                read, written = device_bytes(stat.read())
        except OSError:
            continue  # unmounted meanwhile (a wipe)
        disks.append(DedicatedDisk(target, (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_blocks * st.f_frsize,
                                   read, written))
    return sorted(disks, key=lambda d: d.target)


def collect(client: docker.DockerClient, node: str) -> list[str]:
    """The samples of every running Spindle container on this node's dockerd."""
    lines = []
    for container in client.containers.list(filters={"label": f"{OWNED_LABEL}=true", "status": "running"}):
        container_labels = container.labels
        if CLUSTER_LABEL not in container_labels:
            continue
        labels = {"cluster": container_labels[CLUSTER_LABEL], "member": container_labels.get(MEMBER_LABEL, ""),
                  "node": node}
        if JOB_LABEL in container_labels:
            labels["job"] = container_labels[JOB_LABEL]
        try:
            stats = container.stats(stream=False, one_shot=True)
        except (DockerException, requests.RequestException) as exc:  # ended meanwhile
            log.debug("no statistics for %s: %s", container.name, exc)
            continue
        if not stats.get("cpu_stats", {}).get("cpu_usage"):
            continue  # stopped between the list and the read
        lines += member_lines(stats, labels, dedicated_disks(container.attrs))
    return lines


def push(settings: Settings, lines: list[str], session: requests.Session) -> None:
    if not lines:
        return
    answer = session.post(f"{settings.metrics_url}/api/v1/import/prometheus", data="\n".join(lines) + "\n",
                          auth=(METRICS_USER, settings.metrics_token), timeout=10)
    answer.raise_for_status()


def main() -> None:
    settings = Settings()  # type: ignore[call-arg]  # the required ones come from the environment
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    client, session = docker.from_env(), requests.Session()
    log.info("pushing member figures of node %s to %s every %gs", settings.node_name, settings.metrics_url,
             settings.member_stats_interval_s)
    while True:
        start = time.monotonic()
        try:
            push(settings, collect(client, settings.node_name), session)
        except (DockerException, requests.RequestException) as exc:
            log.warning("member figures not pushed: %s", exc)
        time.sleep(max(0.0, settings.member_stats_interval_s - (time.monotonic() - start)))
