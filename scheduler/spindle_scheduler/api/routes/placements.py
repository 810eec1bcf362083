"""Placement dry-run: where a cluster's members would go, or why they cannot — allocates nothing."""
import copy

from fastapi import APIRouter, Request

from spindle_scheduler.api.deps import ServiceCaller, framework
from spindle_scheduler.api.placement_schemas import DryRunIn
from spindle_scheduler.mesos.placing import node_offers
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, EXECUTOR_MEM_MB
from spindle_scheduler.placement import Plan, place
from spindle_scheduler.schemas import PlanOut

router = APIRouter(tags=["placements"])


def _on_mesos_offers(body: DryRunIn, request: Request) -> Plan:
    # As the launcher would: on copies of the offers held now, each member with its executor's share,
    # counting the members of the cluster that already run (other than those named in the body).
    fw = framework(request)
    offers = [copy.deepcopy(o) for o in fw.last_offers.values()]
    named = {m.member_id for m in body.members}
    running = [t for t in fw.store.running_members(body.cluster_id) if t.member_id not in named]
    return place(body.placement_request(EXECUTOR_CPUS, EXECUTOR_MEM_MB),
                 node_offers(offers, fw.launcher.disk_classes(offers), running))


@router.post("/placements/dry-run")
def dry_run(body: DryRunIn, request: Request, _: ServiceCaller) -> PlanOut:
    """Place the members on ``offers`` (or, if omitted, on the Mesos offers held now, with the
    cluster's members already running there): the plan, or per unplaceable member the reason each
    node gave (``excluded``, ``anti_affinity``, ``cpus``, …). Nothing is reserved or launched."""
    if body.offers is None:
        return PlanOut.of(_on_mesos_offers(body, request))
    return PlanOut.of(place(body.placement_request(), [o.offer() for o in body.offers]))
