"""Turning pending member tasks + offers into LAUNCHes: place (pure placement), hold the chosen
disks and IPs in their services, build TaskInfos. Whatever fails releases what it held."""
import logging
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from spindle_common.clients import DiskClient, NetworkClient
from spindle_common.errors import ApiError
from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, EXECUTOR_MEM_MB, task_info
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore

log = logging.getLogger("spindle.launcher")

# place(tasks of one cluster, offers, disk class by mount root) -> {task_id: (offer, disks, cpu ids)} or why not
PlaceFn = Callable[[list[Task], list[ParsedOffer], dict[str, str]],
                   "dict[str, tuple[ParsedOffer, list[OfferedDisk], list[int]]] | str"]


def consume(offer: ParsedOffer, request: dict[str, Any], roots: list[str]) -> None:
    """Take a launched member's share out of the offer, so later placements in this round see the rest."""
    offer.cpus -= request["cpus"] + EXECUTOR_CPUS
    offer.mem_mb -= request["mem_mb"] + EXECUTOR_MEM_MB
    offer.disks = [d for d in offer.disks if d.root not in roots]


def new_task_id(member_id: str) -> str:
    return f"{member_id}.{uuid.uuid4().hex[:8]}"


class Launcher:
    def __init__(self, store: TaskStore, disks: DiskClient, network: NetworkClient, place: PlaceFn,
                 executor_command: str):
        self.store = store
        self.disks = disks
        self.network = network
        self.place = place
        self.executor_command = executor_command

    def disk_classes(self, offers: list[ParsedOffer]) -> dict[str, str]:
        """Class of every offered disk, by mount root, from the disk inventory."""
        classes = {}
        for hostname in {o.hostname for o in offers}:
            for disk in self.disks.disks_of_node(hostname):
                classes[disk["mount_point"]] = disk["disk_class"]
        return classes

    def launch(self, pending: list[Task], offers: list[ParsedOffer]) -> dict[str, list[dict[str, Any]]]:
        """TaskInfos to launch, by offer id. Clusters are placed all-or-nothing, one after another."""
        classes = self.disk_classes(offers)
        by_cluster: dict[str, list[Task]] = defaultdict(list)
        for task in pending:
            by_cluster[task.cluster_id].append(task)
        launches: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for cluster_id, tasks in by_cluster.items():
            placed = self.place(tasks, offers, classes)
            if isinstance(placed, str):
                for task in tasks:
                    self.store.set(task.task_id, message=f"waiting for resources: {placed}"[:2000])
                continue
            try:
                infos = [self._hold_and_describe(task, *placed[task.task_id]) for task in tasks]
            except ApiError as exc:
                log.warning("cluster %s: could not hold resources: %s", cluster_id, exc.message)
                for task in tasks:
                    self._release_holdings(task.member_id)
                    self.store.set(task.task_id, message=f"retrying: {exc.code}: {exc.message}"[:2000])
                continue
            for task, (offer, info) in zip(tasks, infos):
                consume(offer, task.request, info["_roots"])
                self.store.set(task.task_id, state="LAUNCHING", hostname=offer.hostname, agent_id=offer.agent_id,
                               disk_roots=info["_roots"], ip=info["_ip"], message="")
                launches[offer.offer_id].append({k: v for k, v in info.items() if not k.startswith("_")})
        return launches

    def _hold_and_describe(self, task: Task, offer: ParsedOffer, chosen: list[OfferedDisk],
                           cpu_ids: list[int]) -> tuple[ParsedOffer, dict]:
        request = task.request
        offered = {d.root: d for d in offer.disks}
        roots: list[str] = []
        for disk_class, count in sorted(request.get("disks", {}).items()):
            if count:
                held = self.disks.allocate(offer.hostname, disk_class, count, task.member_id)
                roots += [d["mount_point"] for d in held]
        missing = [r for r in roots if r not in offered]
        if missing:  # the inventory and the offer disagree (e.g. a disk just changed state)
            raise ApiError(409, "OFFER_STALE", f"disks {missing} are not in the offer from {offer.hostname}")
        ip = network = None
        if request.get("network_pool"):
            lease = self.network.allocate(task.member_id, request["network_pool"])
            ip, network = lease["address"], lease["docker_network"]
        spec = {**request["container"], "cluster_id": task.cluster_id, "member_id": task.member_id,
                "cpus": request["cpus"], "mem_mb": request["mem_mb"],
                "cpuset": ",".join(map(str, cpu_ids)) or None,
                "disks": [{"host_path": root} for root in roots], "network": network, "ip": ip}
        info = task_info(offer, task.task_id, task.member_id, request["cpus"], request["mem_mb"],
                         [offered[r] for r in roots], self.executor_command, spec)
        return offer, {**info, "_roots": roots, "_ip": ip}

    def _release_holdings(self, member_id: str, keep_ip: bool = False) -> None:
        """Free whatever ``member_id`` holds (its IP too unless ``keep_ip``); holding nothing is fine here."""
        for release in (self.disks.release,) if keep_ip else (self.disks.release, self.network.release):
            try:
                release(member_id)
            except ApiError as exc:
                if exc.status >= 500:
                    raise

    def release_stale_holdings(self, pending: list[Task]) -> None:
        """After a crash between holding and launching, pending members may still hold resources."""
        for task in pending:
            self._release_holdings(task.member_id)

    def release_task(self, task: Task, keep_ip: bool = False) -> None:
        """A task ended: free its disks (they get wiped) and, unless its member is being replaced, its IP."""
        self._release_holdings(task.member_id, keep_ip)
