"""Floating IPs for cluster members (scheduler/orchestrator, admins): allocate, read, release.

Every error answer is the envelope ``{"error": {"code", "message", "details"}}``.
"""
from datetime import timedelta
from ipaddress import IPv4Address
from typing import Any

from fastapi import APIRouter, Query, Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from spindle_common.errors import ErrorEnvelope, error_responses
from spindle_network import allocation, batch
from spindle_network.api.deps import ConsulDep, DockerDep, ServiceOrAdmin, SessionDep
from spindle_network.docker_networks import detach
from spindle_network.models import FloatingIp, Pool
from spindle_network.schemas import (
    AllocationRequest,
    BatchAllocationOut,
    BatchAllocationRequest,
    HeldIpOut,
    IpOut,
    MemberLease,
    ReleaseRequest,
)

router = APIRouter(prefix="/allocations", tags=["allocations"])


def ip_out(session, ip: FloatingIp, domain: str = "spindle") -> IpOut:
    pool = session.get(Pool, ip.pool_id)
    dns = f"{ip.dns_name}.{ip.dns_service}.service.{domain}" if ip.dns_service and ip.dns_name else None
    return IpOut(address=IPv4Address(str(ip.address)), pool=pool.name, docker_network=pool.docker_network,
                 owner=ip.owner, container=ip.container, dns=dns)


def _docker_network(session: Session, ip: FloatingIp) -> str:
    """The Docker network of ``ip``'s pool."""
    pool = session.get(Pool, ip.pool_id)
    if pool is None:  # floating_ips.pool_id is a foreign key (deleting a pool deletes its IPs)
        raise RuntimeError(f"floating IP {ip.address} has no pool {ip.pool_id}")
    return pool.docker_network


dns_service_id = batch.dns_service_id


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


@router.get("/held", responses=error_responses(401, 403, 422))
def held(session: SessionDep, _: ServiceOrAdmin,
         older_than_s: float = Query(default=0.0, ge=0.0, le=10 * 365 * 86400,
                                     description="only IPs held at least this long")) -> list[HeldIpOut]:
    """Every floating IP an owner holds, oldest first: what a sweep compares with its holders."""
    cutoff = func.timezone("utc", func.now()) - timedelta(seconds=older_than_s)  # allocated_at: UTC, no zone
    rows = session.execute(select(FloatingIp, Pool.name).join(Pool, Pool.id == FloatingIp.pool_id)
                           .where(FloatingIp.owner.is_not(None), FloatingIp.allocated_at <= cutoff)
                           .order_by(FloatingIp.allocated_at, FloatingIp.address)).all()
    return [HeldIpOut(address=IPv4Address(str(ip.address)), pool=pool, owner=ip.owner or "",
                      dns=f"{ip.dns_name}.{ip.dns_service}.service.spindle" if ip.dns_service and ip.dns_name else None,
                      allocated_at=ip.allocated_at) for ip, pool in rows]


# Error answers carry the envelope; each description names the codes that status can carry.
BATCH_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": BatchAllocationOut, "description": "every member already held an IP in the pool: the same leases"},
    201: {"description": "IPs held (members that already held one keep it)"},
    404: {"model": ErrorEnvelope, "description": "POOL_NOT_FOUND: no such pool"},
    409: {"model": ErrorEnvelope, "description": "POOL_EXHAUSTED: the pool has fewer free IPs than the batch needs "
                                                 "(details: pool, free, requested, members); nothing is held"},
    503: {"model": ErrorEnvelope,
          "description": "DNS_REGISTRATION_FAILED: Consul failed a member's name (details: owner, dns_name, "
                         "not_deregistered); the IPs and names this call took are released first. "
                         "ALLOCATION_CONTENDED: concurrent requests kept locking the pool; retry"},
    **error_responses(401, 403, 422, 500),
}
RELEASE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "the IPs freed (owner, container and DNS name now empty)"},
    404: {"model": ErrorEnvelope,
          "description": "NOT_ALLOCATED: with owner, it holds no IP (with owners, holding nothing is no error)"},
    409: {"model": ErrorEnvelope, "description": "DETACH_FAILED: Docker could not detach an IP from its container"},
    503: {"model": ErrorEnvelope, "description": "DNS_DEREGISTRATION_FAILED: Consul could not drop a name; "
                                                 "nothing was released (owners form)"},
    **error_responses(401, 403, 422, 500),
}


@router.post("/batch", status_code=201, response_model=BatchAllocationOut, responses=BATCH_RESPONSES)
def allocate_batch(body: BatchAllocationRequest, session: SessionDep, consul: ConsulDep, _: ServiceOrAdmin,
                   response: Response) -> BatchAllocationOut:
    """Floating IPs (and DNS names) for every member of a cluster in one call: all or nothing.

    Each member gets an IP of ``pool`` (the one it holds there already, if any: a retry returns the
    same leases, 200); with ``dns_service`` (e.g. the cluster id) and a member's ``dns_name`` it is
    registered in Consul as ``<dns_name>.<dns_service>.service.spindle``, checked on
    ``health_tcp_port`` when given. If an IP is missing or a registration fails, the IPs and names
    this call took are released before the error is answered. ``dns_name`` in a lease is the full name.
    """
    members = [batch.Member(m.owner, m.dns_name, m.health_tcp_port) for m in body.members]
    leases, created = batch.allocate_batch(session, consul, body.pool, members, body.dns_service,
                                                   body.healthy)
    if not created:
        response.status_code = 200
    return BatchAllocationOut(leases=[MemberLease(owner=lease.owner, address=lease.address,
                                                  docker_network=lease.docker_network, dns_name=lease.dns_name)
                                      for lease in leases])


@router.post("/release", responses=RELEASE_RESPONSES)
def release(body: ReleaseRequest, session: SessionDep, docker: DockerDep, consul: ConsulDep,
            _: ServiceOrAdmin) -> list[IpOut]:
    """Free every IP the owner (or each of ``owners``, or every owner named ``owner_prefix…``, in
    one call) holds: detach it from its container, drop its DNS name."""
    if body.owner_prefix is not None:  # a cluster's members, those its caller never recorded too
        body.owners = list(session.scalars(select(FloatingIp.owner).distinct()
                                           .where(FloatingIp.owner.startswith(body.owner_prefix, autoescape=True))))
        if not body.owners:
            return []
    if body.owners is not None:
        def detach_ip(ip: FloatingIp) -> None:
            assert ip.container is not None  # release_owners detaches only IPs that are in a container
            detach(docker, _docker_network(session, ip), ip.container)

        rows = batch.release_owners(session, consul, body.owners, detach_ip)
        return [ip_out(session, ip) for ip in rows]
    assert body.owner is not None  # ReleaseRequest: exactly one of owner and owners
    rows = allocation.owned(session, body.owner, lock=True)
    for ip in rows:
        if ip.container:
            detach(docker, _docker_network(session, ip), ip.container)
        if ip.dns_service:
            consul.deregister_service(dns_service_id(body.owner))
        ip.owner = ip.container = ip.dns_service = ip.dns_name = ip.allocated_at = None
    session.commit()
    return [ip_out(session, ip) for ip in rows]
