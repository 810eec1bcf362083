"""Admin: nodes and their whole disks (disk-service's inventory)."""
from fastapi import APIRouter

from spindle_api.admin_forwarding import forward

router = APIRouter(prefix="/admin", tags=["admin: nodes and disks"])

forward(router, "GET", "/nodes", "disk-service", "/nodes", "list nodes")
forward(router, "POST", "/nodes", "disk-service", "/nodes", "register a node", status_code=201)
forward(router, "GET", "/nodes/{name}", "disk-service", "/nodes/{name}", "show a node")
forward(router, "POST", "/nodes/{name}/discover", "disk-service", "/nodes/{name}/discover",
        "register the disks found on a node")
forward(router, "GET", "/nodes/{name}/mesos-resources", "disk-service", "/nodes/{name}/mesos-resources",
        "the node's disks as Mesos agent resources")
forward(router, "GET", "/disks", "disk-service", "/disks", "list disks (filters and pages as disk-service)")
forward(router, "GET", "/disks/{disk_id}", "disk-service", "/disks/{disk_id}", "show a disk")
forward(router, "PATCH", "/disks/{disk_id}", "disk-service", "/disks/{disk_id}", "change a disk")
for action in ("retire", "fail", "wipe"):
    forward(router, "POST", f"/disks/{{disk_id}}/{action}", "disk-service", f"/disks/{{disk_id}}/{action}",
            f"{action} a disk")
forward(router, "GET", "/disks/{disk_id}/transitions", "disk-service", "/disks/{disk_id}/transitions",
        "a disk's state history")
