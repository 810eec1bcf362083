"""Turning pending member tasks + offers into LAUNCHes: place (pure placement), hold the chosen
disks in disk-service (one call per cluster), build TaskInfos. Whatever fails releases what it held.

A job's driver (``request["kind"] == "job"``, member id ``job-<job id>``) is placed on its own, not
with its cluster's members: it never waits for, nor holds up, a member's (re)launch. It holds no
disks; its TaskInfo data tells the executor where the job's files and result go."""
import logging
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from typing import Any

from spindle_common.clients import DiskClient
from spindle_common.errors import ApiError
from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer
from spindle_scheduler.mesos.placing import Platform
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, EXECUTOR_MEM_MB, task_info
from spindle_scheduler.metrics import PLACEMENTS
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore

log = logging.getLogger("spindle.launcher")

# place(tasks of one cluster, offers, disk class by mount root, the platform's nodes and racks)
#   -> {task_id: (offer, disks, cpu ids)} or why not
PlaceFn = Callable[[list[Task], list[ParsedOffer], dict[str, str], Platform],
                   "dict[str, tuple[ParsedOffer, list[OfferedDisk], list[int]]] | str"]
# How long the inventory's failure domains (racks) are used before they are read again.
DOMAINS_TTL_S = 10.0


def consume(offer: ParsedOffer, request: dict[str, Any], roots: list[str]) -> None:
    """Take a launched member's share out of the offer, so later placements in this round see the rest."""
    offer.cpus -= request["cpus"] + EXECUTOR_CPUS
    offer.mem_mb -= request["mem_mb"] + EXECUTOR_MEM_MB
    offer.disks = [d for d in offer.disks if d.root not in roots]


JOB = "job"  # ``request["kind"]`` of a job's driver task


def new_task_id(member_id: str) -> str:
    return f"{member_id}.{uuid.uuid4().hex[:8]}"


def job_member_id(job_id: str) -> str:
    """A job's driver task's member id (unique, like every member id); its Mesos task name too."""
    return f"job-{job_id}"


def is_job(task: Task) -> bool:
    return task.request.get("kind") == JOB


def placement_groups(pending: list[Task]) -> dict[tuple[str, str], list[Task]]:
    """What is placed together, all or nothing: a cluster's members; each job's driver alone."""
    groups: dict[tuple[str, str], list[Task]] = defaultdict(list)
    for task in pending:
        groups[(task.cluster_id, task.member_id if is_job(task) else "")].append(task)
    return groups


def job_fields(request: dict[str, Any]) -> dict[str, Any]:
    """What a job driver's executor needs besides its container (``TaskData``'s job fields)."""
    return {"kind": JOB, "job_id": request["job_id"], "orchestrator_url": request["orchestrator_url"],
            "cpu_limit": request.get("cpu_limit")}


def held_disks(roots: list[str], allocated: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The member's whole disks as it sees them (``/data/N``, in launch order) with what disk-service
    said of each when it allocated them."""
    by_root = {d["mount_point"]: d for d in allocated}
    facts = ("id", "device_path", "disk_class", "size_bytes")
    return [{"container_path": f"/data/{i}", "mount_point": root,
             **{k: by_root[root][k] for k in facts if root in by_root}} for i, root in enumerate(roots, start=1)]


def member_env(container: dict[str, Any], node: str, platform: Platform, launches: int) -> dict[str, str]:
    """A member's environment: its own, where it runs: SPINDLE_NODE (e.g. for the engine's HDFS
    locality) and SPINDLE_RACK, the node's failure domain (the storage products' rack awareness), and
    SPINDLE_LAUNCH, which launch of the member this is (1 the first; more once Spindle relaunched it:
    a replacement, which a product may need to know, as Cassandra's does on fresh disks)."""
    return {**(container.get("env") or {}), "SPINDLE_NODE": node, "SPINDLE_RACK": platform.domain(node),
            "SPINDLE_LAUNCH": str(launches)}


class Launcher:
    """Owns the disk holds of launches: one disk-service call per cluster to hold them, one per
    ended task (or batch) to release them. Floating IPs arrive held, in each member's lease."""

    def __init__(self, store: TaskStore, disks: DiskClient, place: PlaceFn, executor_command: str):
        self.store = store
        self.disks = disks
        self.place = place
        self.executor_command = executor_command
        self._domains: dict[str, str] = {}
        self._domains_at: float | None = None
        self.clock: Callable[[], float] = time.monotonic

    def failure_domains(self) -> dict[str, str]:
        """The inventory's nodes with their failure domain (rack, else the node), read again every
        DOMAINS_TTL_S; while disk-service does not answer, the last ones read."""
        now = self.clock()
        if self._domains_at is None or now - self._domains_at >= DOMAINS_TTL_S:
            try:
                self._domains = self.disks.failure_domains()
            except (ApiError, OSError) as exc:
                log.warning("cannot read the nodes' failure domains (using the last ones read): %s", exc)
            self._domains_at = now
        return self._domains

    def disk_classes(self, offers: list[ParsedOffer], pending: Sequence[Task] = ()) -> dict[str, str]:
        """Class of every offered disk placement may use, by mount root, from the disk inventory: the
        free ones, and the kept disks ``pending`` members are pinned to. A disk allocated to someone
        (a stopped member's, a dataset's) is offered by its agent while no task uses it: never to
        another member."""
        kept = {(pin["node"], root) for t in pending if (pin := t.request.get("pin")) for root in pin["mount_points"]}
        classes = {}
        for hostname in {o.hostname for o in offers}:
            for disk in self.disks.disks_of_node(hostname):
                if disk.get("state") == "free" or (hostname, disk["mount_point"]) in kept:
                    classes[disk["mount_point"]] = disk["disk_class"]
        return classes

    def launch(self, pending: list[Task], offers: list[ParsedOffer],
               nodes: Collection[str] = ()) -> dict[str, list[dict[str, Any]]]:
        """TaskInfos to launch, by offer id. Clusters are placed all-or-nothing, one after another;
        each job's driver on its own. ``nodes``: the platform's nodes now (beside those offering)."""
        classes = self.disk_classes(offers, pending)
        platform = Platform(frozenset(nodes), self.failure_domains()).with_offers(offers)
        launches: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for (cluster_id, job), tasks in placement_groups(pending).items():
            placed = self.place(tasks, offers, classes, platform)
            if isinstance(placed, str):
                PLACEMENTS.labels("waiting").inc()
                for task in tasks:
                    message = f"waiting for resources: {placed}"[:2000]
                    if task.message != message:  # a job may wait through many offers: notify changes only
                        self.store.set(task.task_id, message=message)
                continue
            try:
                infos = self._hold_and_describe(tasks, placed, platform)
            except ApiError as exc:
                PLACEMENTS.labels("hold_failed").inc()
                log.warning("cluster %s%s: could not hold disks: %s", cluster_id, f" {job}" if job else "",
                            exc.message)
                try:
                    self.release_disks([t.member_id for t in tasks if not is_job(t) and not t.request.get("pin")])
                except ApiError as again:  # disk-service away: the sweep frees what PENDING tasks hold
                    log.warning("cluster %s: releasing its partial hold failed too: %s", cluster_id, again.message)
                for task in tasks:
                    self.store.set(task.task_id, message=f"retrying: {exc.code}: {exc.message}"[:2000])
                continue
            PLACEMENTS.labels("placed").inc()
            for task, info in zip(tasks, infos, strict=True):  # one info per task
                offer = placed[task.task_id][0]
                consume(offer, task.request, info["_roots"])
                self.store.set(task.task_id, state="LAUNCHING", hostname=offer.hostname, agent_id=offer.agent_id,
                               disk_roots=info["_roots"], disks=info["_disks"], ip=info["_ip"], message="")
                launches[offer.offer_id].append({k: v for k, v in info.items() if not k.startswith("_")})
        return launches

    def _hold_and_describe(self, tasks: list[Task], placed: dict, platform: Platform) -> list[dict[str, Any]]:
        """Hold every member's disks in one call (all or nothing), then describe each task. A member
        on kept disks holds them already, or takes them over from their holder (a dataset's) first."""
        requests = [{"owner": t.member_id, "node": placed[t.task_id][0].hostname, "disk_class": disk_class,
                     "count": count}
                    for t in tasks if not is_job(t) and not t.request.get("pin")
                    for disk_class, count in sorted(t.request.get("disks", {}).items()) if count]
        held = self.disks.allocate_batch(requests) if requests else {}
        held.update(self._kept_disks([t for t in tasks if t.request.get("pin")]))
        infos = []
        for task in tasks:
            offer, _, cpu_ids = placed[task.task_id]
            request = task.request
            offered = {d.root: d for d in offer.disks}
            allocated = held.get(task.member_id, [])
            pin = request.get("pin")
            roots = list(pin["mount_points"]) if pin else [d["mount_point"] for d in allocated]
            missing = [r for r in roots if r not in offered]
            if missing:  # the inventory and the offer disagree (e.g. a disk just changed state)
                raise ApiError(409, "OFFER_STALE", f"disks {missing} are not in the offer from {offer.hostname}")
            lease = request.get("lease") or {}
            container = {**request["container"], "env": member_env(request["container"], offer.hostname, platform,
                                                                    task.launches)}
            spec = {**container, "cluster_id": task.cluster_id, "member_id": task.member_id,
                    "cpus": request["cpus"], "mem_mb": request["mem_mb"],
                    "cpuset": ",".join(map(str, cpu_ids)) or None,
                    "disks": [{"host_path": root} for root in roots],
                    "network": lease.get("docker_network"), "ip": lease.get("address"),
                    **(job_fields(request) if is_job(task) else {})}
            info = task_info(offer, task.task_id, task.member_id, request["cpus"], request["mem_mb"],
                             [offered[r] for r in roots], self.executor_command, spec)
            infos.append({**info, "_roots": roots, "_disks": held_disks(roots, allocated), "_ip": lease.get("address")})
        return infos

    def _kept_disks(self, tasks: list[Task]) -> dict[str, list[dict[str, Any]]]:
        """The kept disks of pinned members, by member: taken over from their holder first (one call
        for all; a repeat after a crash moves nothing more), then checked to be theirs exactly."""
        moves = [{"from_owner": pin["adopt_from"], "to_owner": t.member_id}
                 for t in tasks if (pin := t.request["pin"]).get("adopt_from")]
        if moves:
            self.disks.transfer(moves)
        kept = {}
        for task in tasks:
            pin = task.request["pin"]
            disks = self.disks.held_by(task.member_id)
            if sorted(d["mount_point"] for d in disks) != sorted(pin["mount_points"]) or \
                    any(d["node"] != pin["node"] for d in disks):
                raise ApiError(409, "KEPT_DISKS_GONE", f"{task.member_id} does not hold its kept disks "
                               f"{pin['mount_points']} on {pin['node']} (it holds {[d['mount_point'] for d in disks]})",
                               {"member_id": task.member_id})
            kept[task.member_id] = disks
        return kept

    def release_disks(self, owners: list[str]) -> None:
        """Free (and wipe) whatever disks ``owners`` hold; holding nothing is fine here."""
        if owners:
            self.disks.release_many(owners)

    def release_stale_holdings(self, pending: list[Task]) -> None:
        """After a crash between holding and launching, pending members may still hold disks."""
        self.release_disks([t.member_id for t in pending if not is_job(t)])
