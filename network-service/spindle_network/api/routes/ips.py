"""Attaching an allocated floating IP to a container, and moving it to another one."""
from ipaddress import IPv4Address

from fastapi import APIRouter

from spindle_common.errors import ApiError
from spindle_network import allocation
from spindle_network.api.deps import DockerDep, ServiceOrAdmin, SessionDep
from spindle_network.api.routes.allocations import ip_out
from spindle_network.docker_networks import attach, detach
from spindle_network.models import Pool
from spindle_network.schemas import ContainerRef, IpOut

router = APIRouter(prefix="/ips", tags=["ips"])


def _allocated(session, address: IPv4Address):
    ip = allocation.ip_or_404(session, str(address))
    if ip.owner is None:
        raise ApiError(409, "NOT_ALLOCATED", f"{address} is not allocated to anyone", {"address": str(address)})
    return ip, session.get(Pool, ip.pool_id).docker_network


@router.post("/{address}/attach")
def attach_ip(address: IPv4Address, body: ContainerRef, session: SessionDep, docker: DockerDep,
              _: ServiceOrAdmin) -> IpOut:
    ip, network = _allocated(session, address)
    if ip.container and ip.container != body.container:
        raise ApiError(409, "IP_ATTACHED", f"{address} is attached to {ip.container}; move it instead",
                       {"container": ip.container})
    if ip.container != body.container:
        attach(docker, network, body.container, str(address))
        ip.container = body.container
        session.commit()
    return ip_out(session, ip)


@router.post("/{address}/detach")
def detach_ip(address: IPv4Address, session: SessionDep, docker: DockerDep, _: ServiceOrAdmin) -> IpOut:
    ip, network = _allocated(session, address)
    if ip.container:
        detach(docker, network, ip.container)
        ip.container = None
        session.commit()
    return ip_out(session, ip)


@router.post("/{address}/move")
def move_ip(address: IPv4Address, body: ContainerRef, session: SessionDep, docker: DockerDep,
            _: ServiceOrAdmin) -> IpOut:
    """Take the IP from its current container (if any) and give it to ``container``; the owner keeps it."""
    ip, network = _allocated(session, address)
    if ip.container == body.container:
        return ip_out(session, ip)
    if ip.container:
        detach(docker, network, ip.container)
    try:
        attach(docker, network, body.container, str(address))
    except ApiError:
        session.rollback()
        if ip.container:  # put it back where it was, so a failed move changes nothing
            attach(docker, network, ip.container, str(address))
        raise
    ip.container = body.container
    session.commit()
    return ip_out(session, ip)
