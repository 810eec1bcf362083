"""Admin: floating-IP pools (network-service)."""
from fastapi import APIRouter, Response

from spindle_api.admin_forwarding import admin_list, admin_one, admin_request
from spindle_api.api.deps import AdminUser, SettingsDep
from spindle_api.api.params import PoolName, segment
from spindle_api.schemas import IpPool, PoolCreate, upstream_model
from spindle_common.errors import error_responses

router = APIRouter(prefix="/admin", tags=["admin: IP pools"])

NO_POOL = "no IP pool with this name (POOL_NOT_FOUND)"


@router.get("/ip-pools", summary="list IP pools", responses=error_responses(401, 403, 502, 503))
def list_pools(admin: AdminUser, settings: SettingsDep) -> list[IpPool]:
    return admin_list(IpPool, settings, admin, "network-service", "/pools")


@router.post("/ip-pools", summary="create an IP pool", status_code=201,
             responses={200: {"model": IpPool, "description": "this pool exists already with this cidr"},
                        **error_responses(400, 401, 403, 409, 413, 422, 502, 503, descriptions={
                            409: "the name is taken with another cidr, or the cidr overlaps a pool or a network of "
                                 "the host, or Docker refused the network",
                            422: "not valid: the cidr, gateway or ranges do not fit together (INVALID_CIDR, …)"})})
def create_pool(body: PoolCreate, admin: AdminUser, settings: SettingsDep, response: Response) -> IpPool:
    """Validate, reserve the CIDR, then create (or adopt) the pool's Docker network."""
    status, answer = admin_request(settings, admin, "network-service", "POST", "/pools",
                                   json=body.model_dump(exclude_none=True))
    response.status_code = status
    return upstream_model(IpPool, answer, "network-service")


@router.get("/ip-pools/{name}", summary="show an IP pool",
            responses=error_responses(401, 403, 404, 422, 502, 503, descriptions={404: NO_POOL}))
def get_pool(name: PoolName, admin: AdminUser, settings: SettingsDep) -> IpPool:
    return admin_one(IpPool, settings, admin, "network-service", "GET", f"/pools/{segment(name)}")


@router.delete("/ip-pools/{name}", summary="delete an IP pool", status_code=204, response_class=Response,
               responses=error_responses(401, 403, 404, 409, 422, 502, 503, descriptions={
                   404: NO_POOL, 409: "the pool still has allocated IPs (POOL_IN_USE)"}))
def delete_pool(name: PoolName, admin: AdminUser, settings: SettingsDep) -> Response:
    """Delete an unused pool and its Docker network."""
    admin_request(settings, admin, "network-service", "DELETE", f"/pools/{segment(name)}")
    return Response(status_code=204)
