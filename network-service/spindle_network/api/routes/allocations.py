"""Floating IPs for cluster members (scheduler/orchestrator, admins): allocate, read, release."""
from fastapi import APIRouter, Response

from spindle_network import allocation
from spindle_network.api.deps import ConsulDep, DockerDep, ServiceOrAdmin, SessionDep
from spindle_network.docker_networks import detach
from spindle_network.models import FloatingIp, Pool
from spindle_network.schemas import AllocationRequest, IpOut, ReleaseRequest

router = APIRouter(prefix="/allocations", tags=["allocations"])


def ip_out(session, ip: FloatingIp, domain: str = "spindle") -> IpOut:
    pool = session.get(Pool, ip.pool_id)
    dns = f"{ip.dns_name}.{ip.dns_service}.service.{domain}" if ip.dns_service and ip.dns_name else None
    return IpOut(address=str(ip.address), pool=pool.name, docker_network=pool.docker_network, owner=ip.owner,
                 container=ip.container, dns=dns)


def dns_service_id(owner: str) -> str:
    return f"member-{owner}"


@router.post("", status_code=201)
def allocate(body: AllocationRequest, session: SessionDep, consul: ConsulDep, _: ServiceOrAdmin,
             response: Response) -> IpOut:
    """The owner's floating IP in the pool (200 with the same IP when it already holds one)."""
    ip, created = allocation.allocate(session, body.pool, body.owner)
    if not created:
        response.status_code = 200
    if body.dns_service and body.dns_name:
        # Every second: a launch waits for the first passing check before the member's name resolves.
        check = consul.tcp_check(str(ip.address), body.health_tcp_port, interval="1s") if body.health_tcp_port else None
        consul.register_service(name=body.dns_service, service_id=dns_service_id(body.owner), address=str(ip.address),
                                port=body.health_tcp_port or 0, check=check, tags=[body.dns_name, "spindle-member"])
        ip.dns_service, ip.dns_name = body.dns_service, body.dns_name
        session.commit()
    return ip_out(session, ip)


@router.get("")
def owned_by(owner: str, session: SessionDep, _: ServiceOrAdmin) -> list[IpOut]:
    return [ip_out(session, ip) for ip in allocation.owned(session, owner)]


@router.post("/release")
def release(body: ReleaseRequest, session: SessionDep, docker: DockerDep, consul: ConsulDep,
            _: ServiceOrAdmin) -> list[IpOut]:
    """Free every IP the owner holds: detach it from its container, drop its DNS name."""
    rows = allocation.owned(session, body.owner, lock=True)
    for ip in rows:
        if ip.container:
            detach(docker, session.get(Pool, ip.pool_id).docker_network, ip.container)
        if ip.dns_service:
            consul.deregister_service(dns_service_id(body.owner))
        ip.owner = ip.container = ip.dns_service = ip.dns_name = ip.allocated_at = None
    session.commit()
    return [ip_out(session, ip) for ip in rows]
