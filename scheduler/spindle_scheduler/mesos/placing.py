"""Adapter between Mesos offers/tasks and the pure placement code."""
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, EXECUTOR_MEM_MB
from spindle_scheduler.models import Task
from spindle_scheduler.placement import MemberRequest, NodeOffer, PlacementRequest, Plan, place
from spindle_scheduler.placement.model import OfferedDisk as PlacementDisk
from spindle_scheduler.store import TaskStore


def node_offers(offers: list[ParsedOffer], classes: dict[str, str], running: Iterable[Task] = (),
                domains: Mapping[str, str] | None = None) -> list[NodeOffer]:
    """Offers as placement sees them; a disk the inventory does not know is not offered. ``running``:
    members already on the nodes (with their hostname), which spread and anti-affinity count;
    ``domains``: each node's failure domain (rack) in the inventory."""
    here: dict[str, list[tuple[str, str]]] = {}
    for task in running:
        if task.hostname:
            here.setdefault(task.hostname, []).append((task.cluster_id, task.request.get("role", "")))
    return [NodeOffer(o.hostname, o.cpus, o.mem_mb,
                      [PlacementDisk(d.root, classes[d.root]) for d in o.disks if d.root in classes],
                      running=here.get(o.hostname, []), rack=(domains or {}).get(o.hostname, ""))
            for o in offers]


@dataclass(frozen=True)
class Platform:
    """The nodes placement sees beyond the offers: every node of the platform now (the agents the
    master counts as active, and those offering) and each one's failure domain (the inventory's rack)."""

    nodes: frozenset[str] = frozenset()
    domains: Mapping[str, str] = field(default_factory=dict)

    def with_offers(self, offers: Iterable[ParsedOffer]) -> "Platform":
        return Platform(self.nodes | {o.hostname for o in offers}, self.domains)

    def domain(self, node: str) -> str:
        """A node's failure domain: its rack in the inventory, else the node itself."""
        return self.domains.get(node, node)

    @property
    def one_node(self) -> bool:
        """A one-node platform: replicas share it, as they cannot be apart."""
        return len(self.nodes) <= 1


def pin_of(task: Task) -> tuple[str | None, tuple[str, ...]]:
    """(node, disk roots) a task on kept disks must be placed on (``MemberSpec.pin``); (None, ())."""
    pin = task.request.get("pin")
    return (pin["node"], tuple(pin["mount_points"])) if pin else (None, ())


def placement_fields(request: dict[str, Any]) -> dict[str, Any]:
    """A task's placement options (stored with it from its ``ClusterSpec``) as ``PlacementRequest`` fields."""
    return {"strategy": request.get("strategy", "spread"), "preferred_hosts": request.get("preferred_hosts", []),
            "anti_affinity_roles": request.get("anti_affinity_roles", []),
            "replica_roles": request.get("replica_roles", []),
            "excluded_hosts": request.get("excluded_hosts", [])}


def plan_cluster(tasks: list[Task], offers: list[ParsedOffer], classes: dict[str, str],
                 running: Iterable[Task] = (), platform: Platform = Platform()) -> Plan:
    """The placement plan of one cluster's tasks on these offers (members are named by task id);
    ``running``: the cluster's members already placed (a replacement keeps away from them);
    ``platform``: its nodes and their failure domains."""
    platform = platform.with_offers(offers)
    request = PlacementRequest(
        cluster_id=tasks[0].cluster_id,
        members=[MemberRequest(t.task_id, t.request.get("role", ""), t.request["cpus"] + EXECUTOR_CPUS,
                               t.request["mem_mb"] + EXECUTOR_MEM_MB, t.request.get("disks", {}),
                               t.request.get("cpuset"), *pin_of(t)) for t in tasks],
        **placement_fields(tasks[0].request), replicas_may_share=platform.one_node)
    return place(request, node_offers(offers, classes, running, platform.domains))


def place_cluster(tasks: list[Task], offers: list[ParsedOffer], classes: dict[str, str],
                  platform: Platform = Platform(), store: TaskStore | None = None,
                  ) -> dict[str, tuple[ParsedOffer, list[OfferedDisk], list[int]]] | str:
    """Where each task of one cluster goes (offer, disks, dedicated cpu ids), or why it cannot. With
    ``store``, the cluster's members already running count (a job's driver is placed on its own)."""
    running: list[Task] = []
    if store is not None and not any(t.request.get("kind") == "job" for t in tasks):
        running = store.running_members(tasks[0].cluster_id, {t.task_id for t in tasks})
    plan = plan_cluster(tasks, offers, classes, running, platform)
    if not plan.placeable:
        return plan.summary()
    by_host = {o.hostname: o for o in offers}
    result = {}
    for placement in plan.placements:
        offer = by_host[placement.node]
        disks = {d.root: d for d in offer.disks}
        result[placement.member_id] = (offer, [disks[root] for root in placement.disk_ids], placement.cpu_ids)
    return result
