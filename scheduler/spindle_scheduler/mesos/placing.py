"""Adapter between Mesos offers/tasks and the pure placement code."""
from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, EXECUTOR_MEM_MB
from spindle_scheduler.models import Task
from spindle_scheduler.placement import MemberRequest, NodeOffer, PlacementRequest, Plan, place
from spindle_scheduler.placement.model import OfferedDisk as PlacementDisk


def node_offers(offers: list[ParsedOffer], classes: dict[str, str]) -> list[NodeOffer]:
    """Offers as placement sees them; a disk the inventory does not know is not offered."""
    return [NodeOffer(o.hostname, o.cpus, o.mem_mb,
                      [PlacementDisk(d.root, classes[d.root]) for d in o.disks if d.root in classes]) for o in offers]


def plan_cluster(tasks: list[Task], offers: list[ParsedOffer], classes: dict[str, str]) -> Plan:
    """The placement plan of one cluster's tasks on these offers (members are named by task id)."""
    first = tasks[0].request
    request = PlacementRequest(
        cluster_id=tasks[0].cluster_id,
        members=[MemberRequest(t.task_id, t.request.get("role", ""), t.request["cpus"] + EXECUTOR_CPUS,
                               t.request["mem_mb"] + EXECUTOR_MEM_MB, t.request.get("disks", {}),
                               t.request.get("cpuset")) for t in tasks],
        strategy=first.get("strategy", "spread"), preferred_hosts=first.get("preferred_hosts", []))
    return place(request, node_offers(offers, classes))


def place_cluster(tasks: list[Task], offers: list[ParsedOffer], classes: dict[str, str]
                  ) -> dict[str, tuple[ParsedOffer, list[OfferedDisk], list[int]]] | str:
    """Where each task of one cluster goes (offer, disks, dedicated cpu ids), or why it cannot."""
    plan = plan_cluster(tasks, offers, classes)
    if not plan.placeable:
        return plan.summary()
    by_host = {o.hostname: o for o in offers}
    result = {}
    for placement in plan.placements:
        offer = by_host[placement.node]
        disks = {d.root: d for d in offer.disks}
        result[placement.member_id] = (offer, [disks[root] for root in placement.disk_ids], placement.cpu_ids)
    return result
