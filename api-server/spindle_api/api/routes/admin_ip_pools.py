"""Admin: floating-IP pools (network-service)."""
from fastapi import APIRouter

from spindle_api.admin_forwarding import forward

router = APIRouter(prefix="/admin", tags=["admin: IP pools"])

forward(router, "GET", "/ip-pools", "network-service", "/pools", "list IP pools")
forward(router, "POST", "/ip-pools", "network-service", "/pools", "create an IP pool", status_code=201)
forward(router, "GET", "/ip-pools/{name}", "network-service", "/pools/{name}", "show an IP pool")
forward(router, "DELETE", "/ip-pools/{name}", "network-service", "/pools/{name}", "delete an IP pool",
        status_code=204)
