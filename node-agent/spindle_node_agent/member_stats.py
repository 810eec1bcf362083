"""Each node's member figures for the time-series database: ``spindle-member-stats``, one per node.

Every ``SPINDLE_MEMBER_STATS_INTERVAL_S`` it reads, for every running Spindle container on this node's
dockerd (members and job drivers: the ``io.spindle.*`` labels), Docker's one-shot statistics — CPU
seconds, memory in use (without the reclaimable page cache, as ``docker stats`` shows it), bytes read
and written on block devices, network bytes — and, for each dedicated disk bound at ``/data/N``, the
bytes used and its size from the host's mount. It pushes them to VictoriaMetrics
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


def block_io(blkio: dict[str, Any]) -> tuple[int, int]:
    """Bytes read and written on block devices (all devices; op names as cgroup v1 or v2 give them)."""
    read = written = 0
    for entry in blkio.get("io_service_bytes_recursive") or []:
        op = str(entry.get("op", "")).lower()
        if op == "read":
            read += int(entry.get("value") or 0)
        elif op == "write":
            written += int(entry.get("value") or 0)
    return read, written


def member_lines(stats: dict[str, Any], labels: dict[str, str],
                 disks: Iterable[tuple[str, int, int]] = ()) -> list[str]:
    """The samples of one container: its Docker statistics and its disks (target, used, size)."""
    lines = [line("spindle_member_cpu_seconds_total", labels,
                  int(stats["cpu_stats"]["cpu_usage"]["total_usage"]) / 1e9),
             line("spindle_member_memory_bytes", labels, memory_in_use(stats.get("memory_stats") or {}))]
    limit = (stats.get("memory_stats") or {}).get("limit")
    if limit:
        lines.append(line("spindle_member_memory_limit_bytes", labels, int(limit)))
    read, written = block_io(stats.get("blkio_stats") or {})
    lines += [line("spindle_member_disk_read_bytes_total", labels, read),
              line("spindle_member_disk_written_bytes_total", labels, written)]
    networks = (stats.get("networks") or {}).values()
    lines += [line("spindle_member_network_receive_bytes_total", labels, sum(n.get("rx_bytes", 0) for n in networks)),
              line("spindle_member_network_transmit_bytes_total", labels,
                   sum(n.get("tx_bytes", 0) for n in networks))]
    for target, used, size in disks:
        lines += [line("spindle_member_disk_used_bytes", {**labels, "disk": target}, used),
                  line("spindle_member_disk_size_bytes", {**labels, "disk": target}, size)]
    return lines


def dedicated_disks(attrs: dict[str, Any]) -> list[tuple[str, int, int]]:
    """(target, bytes used, size) of every dedicated disk bound into the container (``/data/N``)."""
    disks = []
    for mount in attrs.get("Mounts") or []:
        target = mount.get("Destination", "")
        if not target.startswith("/data/"):
            continue
        try:
            st = os.statvfs(mount["Source"])
        except OSError:
            continue  # unmounted meanwhile (a wipe)
        disks.append((target, (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_blocks * st.f_frsize))
    return sorted(disks)


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
