"""Per-cluster batches of floating IPs: every member's IP and DNS name in one call, all or nothing;
many owners released in one call.

A batch holds the members' IPs in one transaction (a member that already holds an IP in the pool
keeps it; the others take free ones with ``FOR UPDATE SKIP LOCKED``), registers the DNS names in
Consul (one agent call per member: the agent has no batch registration, and its transaction API
writes the catalog without the agent's health checks) while that transaction is still open, and
commits only when every registration worked. When one fails, the names this call registered are
deregistered and the transaction is rolled back, so no IP and no name of the failed batch is left.
"""
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass

import httpx
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from spindle_common.consul import ConsulClient
from spindle_common.errors import ApiError
from spindle_network.allocation import CONTENDED_ATTEMPTS, pool_or_404
from spindle_network.models import FloatingIp

log = logging.getLogger("spindle.network.batch")
DOMAIN = "spindle"
# Key space of network-service's advisory locks (disk-service locks the same owner names).
LOCK_CLASS = 8084


def dns_service_id(owner: str) -> str:
    """The Consul service id of a member's DNS name (the same as single allocations use)."""
    return f"member-{owner}"


def fqdn(dns_name: str, dns_service: str, domain: str = DOMAIN) -> str:
    return f"{dns_name}.{dns_service}.service.{domain}"


@dataclass(frozen=True)
class Member:
    owner: str
    dns_name: str | None = None
    health_tcp_port: int | None = None


@dataclass
class Lease:
    owner: str
    address: str
    docker_network: str
    dns_name: str | None  # the full DNS name
    new: bool  # this call took the IP
    named_before: bool  # the member's DNS name was registered (and recorded) before this call


class _Contended(Exception):
    """Enough IPs are free, but requests still in flight lock some of them (or hold the same owner)."""


_LOCK_OWNERS = text(
    "SELECT pg_advisory_xact_lock(:cls, h) FROM ("
    " SELECT DISTINCT hashtext(o) AS h FROM unnest(CAST(:owners AS text[])) AS o ORDER BY h) AS ordered")

_HELD = text(
    "SELECT owner, host(address), dns_service, dns_name FROM network.floating_ips "
    "WHERE pool_id = :pool AND owner = ANY(CAST(:owners AS text[])) FOR UPDATE")

_CLAIM = text(
    "SELECT host(address) FROM network.floating_ips WHERE pool_id = :pool AND owner IS NULL "
    "ORDER BY address LIMIT :n FOR UPDATE SKIP LOCKED")

_FREE = text("SELECT count(*) FROM network.floating_ips WHERE pool_id = :pool AND owner IS NULL")

# Owners (new ones) and DNS names (members that have one) of every member, in one statement.
_TAKE = text(
    "UPDATE network.floating_ips f SET owner = u.owner, "
    " allocated_at = COALESCE(f.allocated_at, timezone('utc', now())), "
    " dns_service = CASE WHEN u.dns_name IS NULL THEN f.dns_service ELSE :dns_service END, "
    " dns_name = COALESCE(u.dns_name, f.dns_name) "
    "FROM unnest(CAST(:addresses AS inet[]), CAST(:owners AS text[]), CAST(:dns_names AS text[])) "
    " AS u(address, owner, dns_name) "
    "WHERE f.address = u.address")


def hold(session: Session, pool_name: str, members: Sequence[Member], dns_service: str | None) -> list[Lease]:
    """Every member's IP in the pool, held in the session's open transaction (not committed)."""
    for attempt in range(CONTENDED_ATTEMPTS):
        try:
            return _hold_once(session, pool_name, members, dns_service)
        except _Contended:
            session.rollback()
            time.sleep(0.01 * (1 + random.random()) * min(attempt + 1, 5))
    raise ApiError(503, "ALLOCATION_CONTENDED", "too many concurrent requests for this pool, retry",
                   {"pool": pool_name})


def _hold_once(session: Session, pool_name: str, members: Sequence[Member], dns_service: str | None) -> list[Lease]:
    pool = pool_or_404(session, pool_name)
    owners = [m.owner for m in members]
    session.execute(_LOCK_OWNERS, {"cls": LOCK_CLASS, "owners": owners})
    held = {owner: (address, svc, name) for owner, address, svc, name in
            session.execute(_HELD, {"pool": pool.id, "owners": owners})}
    new = [m for m in members if m.owner not in held]
    free = [a for (a,) in session.execute(_CLAIM, {"pool": pool.id, "n": len(new)})] if new else []
    if len(free) < len(new):
        unlocked_free = session.scalar(_FREE, {"pool": pool.id}) or 0
        if unlocked_free >= len(new):
            raise _Contended()
        raise ApiError(409, "POOL_EXHAUSTED",
                       f"IP pool {pool_name!r} has {unlocked_free} free floating IPs, the batch needs {len(new)}",
                       {"pool": pool_name, "free": unlocked_free, "requested": len(new), "members": len(members)})
    address_of = {m.owner: held[m.owner][0] for m in members if m.owner in held}
    address_of.update({m.owner: a for m, a in zip(new, free, strict=True)})  # LIMIT n, and the check above
    names = [m.dns_name if dns_service else None for m in members]
    try:
        session.execute(_TAKE, {"addresses": [address_of[o] for o in owners], "owners": owners,
                                "dns_names": names, "dns_service": dns_service})
    except IntegrityError:  # a single allocation gave one of these owners an IP meanwhile: look again
        raise _Contended() from None
    leases = []
    for member, name in zip(members, names, strict=True):
        before = held.get(member.owner)
        leases.append(Lease(
            owner=member.owner, address=address_of[member.owner], docker_network=pool.docker_network,
            dns_name=fqdn(name, dns_service) if name and dns_service else (
                fqdn(before[2], before[1]) if before and before[1] and before[2] else None),
            new=before is None,
            named_before=bool(before and before[1] == dns_service and before[2] == name)))
    return leases


def register_names(consul: ConsulClient, leases: Sequence[Lease], members: Sequence[Member],
                   dns_service: str | None, healthy: bool = False) -> None:
    """One Consul agent registration per named member; on the first failure, deregister the names
    this call added and raise a 503 DNS_REGISTRATION_FAILED (the caller rolls back the IPs)."""
    added: list[str] = []
    for lease, member in zip(leases, members, strict=True):  # hold(): one lease per member, in order
        if not (dns_service and member.dns_name):
            continue
        # Every second: a launch waits for the first passing check before the member's name resolves.
        check = (consul.tcp_check(lease.address, member.health_tcp_port, interval="1s")
                 if member.health_tcp_port else None)
        if check and healthy:  # Consul keeps checking every second from this state on
            check["Status"] = "passing"  # a new check (``register_service``): no earlier result carries over
        try:
            consul.register_service(name=dns_service, service_id=dns_service_id(member.owner), address=lease.address,
                                    port=member.health_tcp_port or 0, check=check,
                                    tags=[member.dns_name, "spindle-member"])
        except Exception as exc:
            left = deregister(consul, added)
            if not isinstance(exc, (httpx.HTTPError, OSError)):
                raise
            raise ApiError(503, "DNS_REGISTRATION_FAILED",
                           f"Consul did not register {lease.dns_name} for {member.owner}: {exc}; "
                           "nothing of this batch is held",
                           {"owner": member.owner, "dns_name": lease.dns_name, "not_deregistered": left}) from exc
        if not lease.named_before:
            added.append(member.owner)


def deregister(consul: ConsulClient, owners: Sequence[str]) -> list[str]:
    """Deregister these members' DNS names, as far as Consul lets us; returns the owners it did not."""
    left = []
    for owner in owners:
        try:
            consul.deregister_service(dns_service_id(owner))
        except (httpx.HTTPError, OSError) as exc:
            log.error("could not deregister %s after a failed batch: %s", dns_service_id(owner), exc)
            left.append(owner)
    return left


def allocate_batch(session: Session, consul: ConsulClient, pool_name: str, members: Sequence[Member],
                   dns_service: str | None, healthy: bool = False) -> tuple[list[Lease], bool]:
    """Hold every member's IP, register their DNS names, commit; all or nothing.

    Returns (one lease per member in order, whether this call took any IP). A member that already
    holds an IP in the pool gets the same one back (its name is registered again, idempotently).
    """
    leases = hold(session, pool_name, members, dns_service)
    try:
        register_names(consul, leases, members, dns_service, healthy)
    except Exception:
        session.rollback()
        raise
    try:
        session.commit()
    except Exception:
        session.rollback()
        deregister(consul, [lease.owner for lease, m in zip(leases, members, strict=True)
                            if dns_service and m.dns_name and not lease.named_before])
        raise
    return leases, any(lease.new for lease in leases)


def release_owners(session: Session, consul: ConsulClient, owners: Sequence[str], detach) -> list[FloatingIp]:
    """Free every IP of ``owners`` in one transaction: detach it from its container (``detach(ip)``),
    drop its DNS name, clear its owner. Owners holding nothing are fine. When Consul cannot drop a
    name, nothing is freed (503 DNS_DEREGISTRATION_FAILED): an IP must not go to another member
    while its old name still points at it."""
    rows = list(session.scalars(select(FloatingIp).where(FloatingIp.owner.in_(sorted(set(owners))))
                                .order_by(FloatingIp.address).with_for_update()))
    for ip in rows:
        assert ip.owner is not None  # selected by owner
        if ip.container:
            detach(ip)
        if ip.dns_service:
            try:
                consul.deregister_service(dns_service_id(ip.owner))
            except (httpx.HTTPError, OSError) as exc:
                session.rollback()
                raise ApiError(503, "DNS_DEREGISTRATION_FAILED",
                               f"Consul did not drop the DNS name of {ip.owner}: {exc}; nothing was released",
                               {"owner": ip.owner}) from exc
        ip.owner = ip.container = ip.dns_service = ip.dns_name = ip.allocated_at = None
    session.commit()
    return rows
