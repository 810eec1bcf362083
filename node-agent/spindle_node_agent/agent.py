"""One node's agent: on its own host, what disk-service and network-service do on the control plane's.

Every iteration (:meth:`NodeAgent.run_once`), each step on its own so one failing never stops the others:

1. register the node with disk-service (until that worked once; its cpus and memory when configured;
   an existing node of the same name, address and disk root is fine);
2. heartbeat: ``POST /nodes/{name}/heartbeat`` (disk-service records ``last_seen_at``);
3. discovery, at start and then every ``SPINDLE_NODE_DISCOVERY_INTERVAL_S``: this node's disks mounted
   nowhere yet are mounted below its disk root (:func:`spindle_node_agent.decisions.disks_to_mount`), then
   this host's ``lsblk --json``
   posted to ``/nodes/{name}/discover`` (disk-service keeps only devices mounted below the node's disk root),
   with the configured class of each disk disk-service does not know yet;
4. wipes: each of the node's disks in state ``wiping`` is checked and reformatted here, exactly as
   disk-service wipes its own machine's disks (:func:`spindle_disk.wipe.wipe_device`), and the outcome
   reported (``POST /disks/{id}/wipe-result``);
5. networks: each macvlan IP pool gets its Docker network on this node's dockerd (``DOCKER_HOST``),
   same name, subnet, gateway and automatic range, parent ``SPINDLE_NODE_FABRIC_IFACE``
   (:func:`spindle_network.docker_networks.ensure_network`). Bridge pools are the control plane's.
6. containers: Spindle's containers on this node's dockerd that stopped over a minute ago are removed
   (:func:`spindle_node_agent.decisions.stale_containers`): what a node that died and came back left.

It talks to the control plane over HTTP only (the internal token, actor ``node-agent/<node>``, role
``admin``: registering nodes, posting discoveries and listing pools are admin routes). An unreachable
service or an error answer is logged and tried again next iteration.
"""
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import docker
import requests
from docker.errors import DockerException

from spindle_common.clients import DiskClient, ServiceClient
from spindle_common.errors import ApiError
from spindle_disk import blockdev
from spindle_disk.wipe import wipe_device
from spindle_network.docker_networks import ensure_network
from spindle_node_agent import __version__
from spindle_node_agent.config import Settings
from spindle_node_agent.decisions import (
    MACVLAN,
    STALE_AFTER,
    Mount,
    classes_for_new_disks,
    discovery_due,
    disks_to_mount,
    disks_to_wipe,
    pool_networks,
    registration_conflict,
    stale_containers,
    wipe_report,
)

log = logging.getLogger("spindle.node_agent")


@dataclass
class Iteration:
    """What one iteration did (for tests and logs); ``errors`` are the steps that failed, with why."""

    registered: bool = False
    heartbeat: bool = False
    discovered: bool = False
    wiped: dict[int, str | None] = field(default_factory=dict)  # disk id -> None (wiped) or why not
    networks_created: list[str] = field(default_factory=list)
    containers_removed: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)


class NodeAgent:
    def __init__(self, settings: Settings, disks: DiskClient | None = None, network: ServiceClient | None = None,
                 docker_client: Callable[[], docker.DockerClient] = docker.from_env,
                 clock: Callable[[], float] = time.monotonic):
        self.settings = settings
        self.node = settings.node_name
        # Role node, signed with the nodes' key (SPINDLE_NODE_IDENTITY_KEY): all a node may be.
        self.disks = disks or DiskClient(settings.disk_service_url, settings.internal_token, settings.actor,
                                         role="node")
        self.network = network or ServiceClient(settings.network_service_url, settings.internal_token,
                                                settings.actor, role="node")
        self._docker_factory = docker_client
        self._docker: docker.DockerClient | None = None
        self._clock = clock
        self._registered = False
        self._last_discovery: float | None = None
        self._last_problem: dict[str, str] = {}

    # --- the loop -------------------------------------------------------------------------------

    def run_forever(self, stop: threading.Event) -> None:
        """Iterate every ``SPINDLE_NODE_AGENT_INTERVAL_S`` until ``stop`` is set (SIGTERM/SIGINT)."""
        log.info("node agent %s (%s) for node %s at %s, disks below %s, fabric %s", __version__, self.settings.actor,
                 self.node, self.settings.node_address, self.settings.node_disk_root, self.settings.node_fabric_iface)
        while not stop.is_set():
            try:
                self.run_once()
            except Exception:  # a bug in one iteration must not end the node's agent
                log.exception("node agent iteration failed")
            stop.wait(self.settings.node_agent_interval_s)
        self.close()

    def run_once(self) -> Iteration:
        """One iteration: register (until done), heartbeat, discover when due, wipe, networks."""
        it = Iteration()
        self._step(it, "register", self._register)
        if self._registered:
            self._step(it, "heartbeat", self._heartbeat)
        if self._registered:  # still: the heartbeat may have found the node gone
            self._step(it, "discover", self._discover_if_due)
            self._step(it, "wipe", self._wipe_all)
        self._step(it, "networks", self._ensure_networks)
        self._step(it, "containers", self._remove_stale_containers)
        return it

    def close(self) -> None:
        self.disks.close()
        self.network.close()
        if self._docker is not None:
            self._docker.close()

    def _step(self, it: Iteration, name: str, step: Callable[[Iteration], None]) -> None:
        try:
            step(it)
        except (ApiError, DockerException, requests.RequestException, blockdev.CommandFailed) as exc:
            it.errors[name] = describe(exc)
            self._problem(name, f"{name}: {describe(exc)} (trying again next iteration)")
        else:
            self._problem(name, None)

    def _problem(self, key: str, message: str | None) -> None:
        """Log a problem once while it lasts (the loop runs every few seconds), and when it ends."""
        previous = self._last_problem.pop(key, None)
        if message is None:
            if previous is not None:
                log.info("%s: working again", key)
            return
        self._last_problem[key] = message
        if message != previous:
            log.warning("%s", message)

    # --- disks ----------------------------------------------------------------------------------

    def _register(self, it: Iteration) -> None:
        if self._registered:
            it.registered = True
            return
        body: dict[str, Any] = {"name": self.node, "address": self.settings.node_address,
                                "disk_root": self.settings.node_disk_root}
        body.update({key: value for key, value in (("cpus", self.settings.node_cpus),
                                                   ("mem_mb", self.settings.node_mem_mb)) if value is not None})
        try:
            self.disks.request("POST", "/nodes", json=body)
        except ApiError as exc:
            if exc.code != "NODE_EXISTS":
                raise
            known = self.disks.request("GET", f"/nodes/{self.node}")
            conflict = registration_conflict(known, self.settings.node_address, self.settings.node_disk_root)
            if conflict:  # never wipe by another node's idea of where the disks are
                raise ApiError(409, "NODE_EXISTS", f"{conflict}: not discovering or wiping", {"node": self.node}) \
                    from exc
        self._registered = it.registered = True
        log.info("node %s registered with disk-service (address %s, disk root %s)", self.node,
                 self.settings.node_address, self.settings.node_disk_root)

    def _heartbeat(self, it: Iteration) -> None:
        try:
            self.disks.request("POST", f"/nodes/{self.node}/heartbeat", json={"agent_version": __version__})
        except ApiError as exc:
            if exc.code == "NODE_NOT_FOUND":  # disk-service lost the node (a new database): register again
                self._registered = False
                self._last_discovery = None
            raise
        it.heartbeat = True

    def _discover_if_due(self, it: Iteration) -> None:
        now = self._clock()
        if discovery_due(self._last_discovery, now, self.settings.node_discovery_interval_s):
            self.discover()
            self._last_discovery = now
            it.discovered = True

    def discover(self) -> dict[str, Any]:
        """Post this host's ``lsblk --json`` to disk-service (with the configured class of each disk it
        does not know yet); its answer (registered, updated, ignored)."""
        lsblk = blockdev.lsblk()
        if self.mount_new(lsblk):
            lsblk = blockdev.lsblk()
        body: dict[str, Any] = {"lsblk": lsblk}
        if self.settings.node_disk_classes:
            body["classes"] = classes_for_new_disks(self.settings.node_disk_classes, self.disks.disks(node=self.node))
        result = self.disks.request("POST", f"/nodes/{self.node}/discover", json=body)
        for disk in result["registered"]:
            log.info("new disk %s: %s on %s (%s)", disk["id"], disk["device_path"], disk["mount_point"],
                     disk["disk_class"])
        return result

    def mount_new(self, lsblk: dict[str, Any]) -> list[Mount]:
        """Mount this node's disks that are mounted nowhere yet (``disks_to_mount``); what it mounted."""
        mounts = disks_to_mount(lsblk, self.settings.node_disk_label_prefix, self.settings.node_disk_root)
        for mount in mounts:
            os.makedirs(mount.mount_point, exist_ok=True)
            blockdev.run(["mount", "-o", blockdev.MOUNT_OPTIONS, mount.device, mount.mount_point],
                         self.settings.node_wipe_timeout_s)
            log.info("mounted %s on %s", mount.device, mount.mount_point)
        return mounts

    def _wipe_all(self, it: Iteration) -> None:
        for disk in disks_to_wipe(self.disks.disks(node=self.node, state="wiping"), self.node):
            try:
                it.wiped[disk["id"]] = self.wipe(disk)
            except ApiError as exc:  # the report did not arrive: the disk stays wiping, so next iteration wipes again
                it.errors[f"wipe {disk['id']}"] = describe(exc)
                log.warning("disk %s: reporting its wipe failed: %s", disk["id"], describe(exc))

    def wipe(self, disk: Mapping[str, Any]) -> str | None:
        """Wipe one of this node's disks and report it; None when wiped, else why not."""
        started = time.monotonic()
        reason = wipe_device(disk["device_path"], disk["mount_point"], disk.get("fs_type"), disk.get("fs_label"),
                             self.settings.node_disk_root, self.settings.node_wipe_timeout_s)
        self.disks.request("POST", f"/disks/{disk['id']}/wipe-result", json=wipe_report(reason))
        log.info("wiped disk %s (%s on %s) in %.1f s: %s", disk["id"], disk["device_path"], disk["mount_point"],
                 time.monotonic() - started, "ok" if reason is None else reason)
        return reason

    # --- networks -------------------------------------------------------------------------------

    def _docker_client(self) -> docker.DockerClient:
        if self._docker is None:
            self._docker = self._docker_factory()
        return self._docker

    def _ensure_networks(self, it: Iteration) -> None:
        pools = [p for p in self.network.request("GET", "/pools") if p.get("driver") == MACVLAN]
        if not pools:
            return
        client = self._docker_client()
        try:
            existing = [n.name for n in client.networks.list()]
        except (DockerException, requests.RequestException):
            self._docker = None  # a new client next time (dockerd may have restarted)
            raise
        for net in pool_networks(pools, existing, self.settings.node_fabric_iface):
            key = f"network {net.docker_network}"
            try:
                ensure_network(client, net.docker_network, net.pool, net.cidr, net.gateway, net.auto_cidr, MACVLAN,
                               net.parent)
            except (ApiError, DockerException, requests.RequestException) as exc:
                it.errors[key] = describe(exc)
                self._problem(key, f"pool {net.pool}: {describe(exc)}")
                continue
            self._problem(key, None)
            if not net.exists:
                it.networks_created.append(net.docker_network)
                log.info("created Docker network %s for pool %s: %s (gateway %s, automatic %s) on %s",
                         net.docker_network, net.pool, net.cidr, net.gateway, net.auto_cidr, net.parent)

    # --- containers -----------------------------------------------------------------------------

    def _remove_stale_containers(self, it: Iteration) -> None:
        client = self._docker_client()
        try:
            stopped = client.api.containers(all=True, filters={"label": "io.spindle.cluster", "status": "exited"})
            inspected = [client.api.inspect_container(c["Id"]) for c in stopped]
        except (DockerException, requests.RequestException):
            self._docker = None
            raise
        for container_id in stale_containers(inspected, datetime.now(UTC)):
            client.api.remove_container(container_id, force=True)
            it.containers_removed.append(container_id)
            log.info("removed stale container %s (stopped over %s ago)", container_id[:12], STALE_AFTER)


def describe(exc: Exception) -> str:
    if isinstance(exc, ApiError):
        return f"{exc.status} {exc.code}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"
