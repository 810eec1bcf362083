"""Nodes (admin): register, list, put in a rack (failure domain), discover their Spindle disks; export
their Mesos agent resources; node agents' heartbeats."""
import logging
from typing import Any

from fastapi import APIRouter, Response, status
from sqlalchemy import func, select

from spindle_common.auth import require_own_node
from spindle_common.errors import ApiError, error_responses
from spindle_disk import blockdev, discovery, inventory, mesos_resources, schemas
from spindle_disk.api.deps import Admin, NodeOrAdmin, ServiceNodeOrAdmin, ServiceOrAdmin, SessionDep, SettingsDep
from spindle_disk.models import Disk
from spindle_disk.wipe import is_local

router = APIRouter(prefix="/nodes", tags=["nodes"])
log = logging.getLogger("spindle.disk.nodes")
NO_NODE = "no node of that name (NODE_NOT_FOUND)"


@router.post("", response_model=schemas.NodeOut, status_code=status.HTTP_201_CREATED, responses={
    200: {"model": schemas.NodeOut, "description": "this node was registered already, just like this"},
    **error_responses(401, 403, 409, 422, descriptions={
        409: "a node of this name is registered with other attributes (NODE_EXISTS)"})})
def register_node(body: schemas.NodeCreate, session: SessionDep, caller: NodeOrAdmin, response: Response):
    """Register a node; the same registration again returns it with 200."""
    require_own_node(caller, body.name)
    node, created = inventory.register_node(session, body)
    if not created:
        response.status_code = status.HTTP_200_OK
    return node


@router.get("", response_model=list[schemas.NodeOut], responses=error_responses(401, 403))
def list_nodes(session: SessionDep, _: ServiceOrAdmin):
    """Every node by name (services: each node's failure domain, which placement spreads replicas over)."""
    return inventory.list_nodes(session)


@router.patch("/{name}", response_model=schemas.NodeOut,
              responses=error_responses(401, 403, 404, 422, descriptions={
                  404: NO_NODE, 422: "a field other than rack, or a rack that is not a lowercase name "
                                     "(VALIDATION_FAILED); nothing is changed"}))
def edit_node(name: str, body: schemas.NodeUpdate, session: SessionDep, _: Admin):
    """Put the node in a rack, its failure domain; ``{"rack": null}`` takes it out (the node is its own)."""
    return inventory.set_rack(session, name, body.rack)


@router.get("/{name}", response_model=schemas.NodeOut)
def get_node(name: str, session: SessionDep, caller: ServiceNodeOrAdmin):
    """A node (services: where its agent is, e.g. the api-server reading a member's logs)."""
    require_own_node(caller, name)
    return inventory.node_or_404(session, name)


@router.post("/{name}/discover", response_model=schemas.DiscoverResult)
def discover_disks(name: str, body: schemas.DiscoverRequest, session: SessionDep, settings: SettingsDep,
                   caller: NodeOrAdmin):
    """Register the node's disks prepared for Spindle (mounted below its disk root; a Spindle-labelled
    disk mounted elsewhere is another node's).

    A remote node's ``lsblk --json`` output comes in the body; for this machine it may be omitted.
    """
    require_own_node(caller, name)
    node = inventory.node_or_404(session, name)
    lsblk = body.lsblk
    if lsblk is None:
        if not is_local(node, settings):
            raise ApiError(422, "LSBLK_REQUIRED", f"{name} is not this machine: post its lsblk --json output",
                           {"command": " ".join(discovery.LSBLK_COMMAND)})
        lsblk = blockdev.lsblk()
    if not isinstance(lsblk.get("blockdevices"), list):
        raise ApiError(422, "INVALID_LSBLK", "lsblk output has no blockdevices list")
    found, ignored = discovery.discover(lsblk, node.disk_root)
    new, updated = inventory.register_found(session, node, found, body.classes, caller.actor)
    known = {d.id: d for d in inventory.views(session, inventory.disk_query().where(Disk.id.in_(new + updated)))}
    return schemas.DiscoverResult(
        registered=[known[i] for i in new], updated=[known[i] for i in updated],
        ignored=[schemas.IgnoredDeviceOut(device_path=i.device_path, reason=i.reason) for i in ignored],
    )


@router.post("/{name}/heartbeat", response_model=schemas.NodeOut,
             responses=error_responses(401, 403, 404, 422, descriptions={404: NO_NODE}))
def heartbeat(name: str, session: SessionDep, caller: ServiceNodeOrAdmin, body: schemas.Heartbeat | None = None):
    """The node's agent is alive: record now as the node's ``last_seen_at``."""
    require_own_node(caller, name)
    node = inventory.node_or_404(session, name)
    node.last_seen_at = func.now()
    session.commit()
    log.debug("heartbeat of node %s from %s (agent %s)", name, caller.actor, body.agent_version if body else None)
    return node


@router.get("/{name}/mesos-resources")
def mesos_agent_resources(name: str, session: SessionDep, caller: ServiceNodeOrAdmin) -> list[dict[str, Any]]:
    """The node's Mesos agent ``--resources`` JSON: cpus, mem and one MOUNT disk per usable disk."""
    require_own_node(caller, name)
    node = inventory.node_or_404(session, name)
    disks = session.scalars(select(Disk).where(Disk.node_id == node.id))
    return mesos_resources.agent_resources(disks, node.cpus, node.mem_mb)
