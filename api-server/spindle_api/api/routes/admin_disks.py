"""Admin: nodes and their whole disks (disk-service's inventory)."""
from fastapi import APIRouter, Response

from spindle_api.admin_forwarding import admin_list, admin_one, admin_request
from spindle_api.api.deps import AdminUser, SettingsDep
from spindle_api.api.params import (
    DiskClassFilter,
    DiskId,
    DiskOwnerFilter,
    DiskPageSize,
    DiskPageToken,
    NodeFilter,
    NodeName,
    segment,
)
from spindle_api.schemas import (
    DiscoverRequest,
    DiscoverResult,
    Disk,
    DiskPage,
    DiskTransition,
    DiskUpdate,
    MesosResource,
    Node,
    NodeCreate,
    NodeUpdate,
    StateChange,
    upstream_model,
)
from spindle_common.contracts import DiskState
from spindle_common.errors import error_responses

router = APIRouter(prefix="/admin", tags=["admin: nodes and disks"])

NO_NODE = "no node with this name (NODE_NOT_FOUND)"
NO_DISK = "no disk with this id (DISK_NOT_FOUND)"
BAD_TRANSITION = "the disk's state does not allow this change (e.g. retiring an allocated disk)"


def _errors(*statuses: int, descriptions: dict[int, str] | None = None) -> dict[int | str, dict]:
    """What an admin route of disk-service's inventory can answer besides its success."""
    return error_responses(401, 403, *statuses, 502, 503, descriptions=descriptions)


@router.get("/nodes", summary="list nodes", responses=_errors())
def list_nodes(admin: AdminUser, settings: SettingsDep) -> list[Node]:
    return admin_list(Node, settings, admin, "disk-service", "/nodes")


@router.post("/nodes", summary="register a node", status_code=201,
             responses={200: {"model": Node, "description": "this node was registered already, just like this"},
                        **_errors(400, 409, 413, 422, descriptions={
                            409: "a node of this name is registered with other attributes (NODE_EXISTS)"})})
def register_node(body: NodeCreate, admin: AdminUser, settings: SettingsDep, response: Response) -> Node:
    """Register a node; the same registration again returns it with 200."""
    status, answer = admin_request(settings, admin, "disk-service", "POST", "/nodes", json=body.model_dump())
    response.status_code = status
    return upstream_model(Node, answer, "disk-service")


@router.get("/nodes/{name}", summary="show a node", responses=_errors(404, 422, descriptions={404: NO_NODE}))
def get_node(name: NodeName, admin: AdminUser, settings: SettingsDep) -> Node:
    return admin_one(Node, settings, admin, "disk-service", "GET", f"/nodes/{segment(name)}")


@router.patch("/nodes/{name}", summary="set or clear a node's rack",
              responses=_errors(400, 404, 413, 422, descriptions={
                  404: NO_NODE, 422: "a field other than rack, or a rack that is not a lowercase name "
                                     "(VALIDATION_FAILED); nothing is changed"}))
def edit_node(name: NodeName, body: NodeUpdate, admin: AdminUser, settings: SettingsDep) -> Node:
    """Put the node in a rack, its failure domain, which placement spreads replicas over;
    ``{"rack": null}`` takes it out (the node is its own failure domain again)."""
    return admin_one(Node, settings, admin, "disk-service", "PATCH", f"/nodes/{segment(name)}",
                     json=body.model_dump())


@router.post("/nodes/{name}/discover", summary="register the disks found on a node",
             responses=_errors(400, 404, 409, 413, 422, descriptions={
                 404: NO_NODE, 409: "a disk found conflicts with the inventory",
                 422: "not valid (VALIDATION_FAILED), or lsblk output is needed for a node other than disk-service's "
                      "machine (LSBLK_REQUIRED, INVALID_LSBLK)"}))
def discover_disks(name: NodeName, body: DiscoverRequest, admin: AdminUser, settings: SettingsDep) -> DiscoverResult:
    """Register the node's disks prepared for Spindle (Spindle label or mounted below its disk root).
    A remote node's ``lsblk --json`` output comes in the body; for disk-service's machine it may be omitted."""
    return admin_one(DiscoverResult, settings, admin, "disk-service", "POST", f"/nodes/{segment(name)}/discover",
                     json=body.model_dump(exclude_none=True))


@router.get("/nodes/{name}/mesos-resources", summary="the node's disks as Mesos agent resources",
            response_model_exclude_none=True, responses=_errors(404, 422, descriptions={404: NO_NODE}))
def mesos_resources(name: NodeName, admin: AdminUser, settings: SettingsDep) -> list[MesosResource]:
    return admin_list(MesosResource, settings, admin, "disk-service", f"/nodes/{segment(name)}/mesos-resources")


@router.get("/disks", summary="list disks", responses=_errors(422))
def list_disks(admin: AdminUser, settings: SettingsDep, node: NodeFilter = None, state: DiskState | None = None,
               disk_class: DiskClassFilter = None, owner: DiskOwnerFilter = None, page_size: DiskPageSize = 100,
               page_token: DiskPageToken = None) -> DiskPage:
    """Disks filtered by node, state, class and owner, in pages (pass back ``next_page_token``)."""
    params = {"node": node, "state": state, "class": disk_class, "owner": owner, "page_size": page_size,
              "page_token": page_token}
    return admin_one(DiskPage, settings, admin, "disk-service", "GET", "/disks",
                     params={k: v for k, v in params.items() if v is not None})


@router.get("/disks/{disk_id}", summary="show a disk", responses=_errors(404, 422, descriptions={404: NO_DISK}))
def get_disk(disk_id: DiskId, admin: AdminUser, settings: SettingsDep) -> Disk:
    return admin_one(Disk, settings, admin, "disk-service", "GET", f"/disks/{segment(disk_id)}")


@router.patch("/disks/{disk_id}", summary="change a disk",
              responses=_errors(400, 404, 409, 413, 422, descriptions={404: NO_DISK, 409: BAD_TRANSITION}))
def edit_disk(disk_id: DiskId, body: DiskUpdate, admin: AdminUser, settings: SettingsDep) -> Disk:
    """Set the disk's class and/or replace its labels."""
    return admin_one(Disk, settings, admin, "disk-service", "PATCH", f"/disks/{segment(disk_id)}",
                     json=body.model_dump(exclude_none=True))


def _state_change(action: str, summary: str, doc: str) -> None:
    def change(disk_id: DiskId, body: StateChange, admin: AdminUser, settings: SettingsDep) -> Disk:
        return admin_one(Disk, settings, admin, "disk-service", "POST", f"/disks/{segment(disk_id)}/{action}",
                         json=body.model_dump(exclude_none=True))

    change.__doc__ = doc
    router.add_api_route(f"/disks/{{disk_id}}/{action}", change, methods=["POST"], summary=summary,
                         name=f"{action}_disk",
                         responses=_errors(400, 404, 409, 413, 422, descriptions={404: NO_DISK, 409: BAD_TRANSITION}))


_state_change("retire", "retire a disk", "Take a free disk out of service for good.")
_state_change("fail", "mark a disk failed", "Quarantine a disk (from any state); it is no longer offered or allocated.")
_state_change("wipe", "repair a failed disk", "Wipe a failed disk (in the background) and make it free again if "
                                               "that works.")


@router.get("/disks/{disk_id}/transitions", summary="a disk's state history",
            responses=_errors(404, 422, descriptions={404: NO_DISK}))
def disk_history(disk_id: DiskId, admin: AdminUser, settings: SettingsDep) -> list[DiskTransition]:
    """The disk's audit log: every state change, who made it, when, for which owner."""
    return admin_list(DiskTransition, settings, admin, "disk-service", f"/disks/{segment(disk_id)}/transitions")
