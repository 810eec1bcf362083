"""HTTP routes of disk-service, one module per resource."""
from fastapi import APIRouter

from spindle_disk.api.routes import allocations, disks, nodes

routers: list[APIRouter] = [nodes.router, disks.router, allocations.router]
