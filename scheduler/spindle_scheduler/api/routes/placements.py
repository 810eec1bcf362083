"""Placement dry-run: where a cluster's members would go, or why they cannot — allocates nothing."""
import copy

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from spindle_common.errors import error_responses
from spindle_scheduler.api.deps import ServiceCaller, framework
from spindle_scheduler.api.placement_schemas import DryRunIn
from spindle_scheduler.mesos.placing import Platform, node_offers
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
    platform = Platform(frozenset(fw.platform_nodes()), fw.launcher.failure_domains()).with_offers(offers)
    return place(body.placement_request(EXECUTOR_CPUS, EXECUTOR_MEM_MB, platform.one_node),
                 node_offers(offers, fw.launcher.disk_classes(offers), running, platform.domains))


@router.post("/placements/dry-run")
def dry_run(body: DryRunIn, request: Request, _: ServiceCaller) -> PlanOut:
    """Place the members on ``offers`` (or, if omitted, on the Mesos offers held now, with the
    cluster's members already running there): the plan, or per unplaceable member the reason each
    node gave (``excluded``, ``anti_affinity``, ``cpus``, …). Nothing is reserved or launched."""
    if body.offers is None:
        return PlanOut.of(_on_mesos_offers(body, request))
    offers = [o.offer() for o in body.offers]
    return PlanOut.of(place(body.placement_request(may_share=len(offers) <= 1), offers))


class PlatformNode(BaseModel):
    name: str
    failure_domain: str = Field(description="its rack in the node inventory; the node itself when it has none")


@router.get("/nodes", responses=error_responses(401, 403, 503))
def platform_nodes(request: Request, _: ServiceCaller) -> list[PlatformNode]:
    """The platform's nodes now (the agents the master counts as active; the master away: those last
    seen), each with its failure domain: what keeping replicas apart counts."""
    fw = framework(request)
    platform = Platform(domains=fw.launcher.failure_domains())
    active = fw.active_agents() or fw.platform_nodes()
    return [PlatformNode(name=n, failure_domain=platform.domain(n)) for n in sorted(active)]
