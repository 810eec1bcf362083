"""HTTP routes of network-service, one module per resource."""
from fastapi import APIRouter

from spindle_network.api.routes import allocations, ips, pools

routers: list[APIRouter] = [pools.router, allocations.router, ips.router]
