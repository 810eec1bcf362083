"""IP pools (admins): create with their Docker network, list with usage, delete when unused."""
from fastapi import APIRouter, Response
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from spindle_common.errors import ApiError
from spindle_network.allocation import pool_or_404
from spindle_network.api.deps import Admin, DockerDep, NodeOrAdmin, ServiceOrAdmin, SessionDep
from spindle_network.docker_networks import ensure_network, remove_network
from spindle_network.host_networks import host_networks
from spindle_network.models import FloatingIp, Pool
from spindle_network.pool_rules import plan_pool
from spindle_network.schemas import PoolCreate, PoolOut

router = APIRouter(prefix="/pools", tags=["pools"])


def pool_out(session, pool: Pool) -> PoolOut:
    total, used = session.execute(select(func.count(), func.count(FloatingIp.owner)).where(
        FloatingIp.pool_id == pool.id)).one()
    return PoolOut(name=pool.name, cidr=str(pool.cidr), gateway=str(pool.gateway),
                   floating_cidr=str(pool.floating_cidr), auto_cidr=str(pool.auto_cidr), driver=pool.driver,
                   parent=pool.parent, docker_network=pool.docker_network, floating_total=total, floating_used=used)


@router.post("", status_code=201)
def create_pool(body: PoolCreate, session: SessionDep, docker: DockerDep, _: Admin, response: Response) -> PoolOut:
    """Validate, reserve the CIDR in the database, then create (or adopt) the Docker network."""
    if body.driver == "macvlan" and not body.parent:
        raise ApiError(422, "PARENT_REQUIRED", "a macvlan pool needs a parent interface", {"field": "parent"})
    existing = session.scalar(select(Pool).where(Pool.name == body.name))
    if existing:
        if str(existing.cidr) == body.cidr:
            response.status_code = 200
            return pool_out(session, existing)
        raise ApiError(409, "POOL_EXISTS", f"pool {body.name!r} exists with {existing.cidr}", {"pool": body.name})
    own = {str(c) for c in session.scalars(select(Pool.cidr))}
    segment = body.parent if body.driver == "macvlan" else None  # the L2 segment a macvlan pool lives on
    plan = plan_pool(body.cidr, body.gateway, body.floating_cidr, body.auto_cidr, host_networks(own, segment))
    pool = Pool(name=body.name, cidr=str(plan.cidr), gateway=str(plan.gateway), floating_cidr=str(plan.floating),
                auto_cidr=str(plan.auto), driver=body.driver, parent=body.parent, docker_network=f"spindle-{body.name}")
    session.add(pool)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        clash = [p.name for p in session.scalars(select(Pool).where(Pool.cidr.op("&&")(str(plan.cidr))))]
        raise ApiError(409, "POOL_OVERLAPS", f"{plan.cidr} overlaps pool(s) {', '.join(clash)}",
                       {"pools": clash}) from None
    session.add_all(FloatingIp(address=a, pool_id=pool.id) for a in plan.floating_addresses())
    ensure_network(docker, pool.docker_network, pool.name, str(plan.cidr), str(plan.gateway), str(plan.auto),
                   body.driver, body.parent)  # raises before commit: no row without its network
    session.commit()
    return pool_out(session, pool)


@router.get("")
def list_pools(session: SessionDep, _: NodeOrAdmin) -> list[PoolOut]:
    return [pool_out(session, p) for p in session.scalars(select(Pool).order_by(Pool.name))]


@router.get("/{name}")
def get_pool(name: str, session: SessionDep, _: ServiceOrAdmin) -> PoolOut:
    """The pool with its ranges and usage (services read it too: the orchestrator's network isolation
    needs its tenant ranges)."""
    return pool_out(session, pool_or_404(session, name))


@router.delete("/{name}", status_code=204)
def delete_pool(name: str, session: SessionDep, docker: DockerDep, _: Admin) -> None:
    pool = pool_or_404(session, name)
    used = session.scalar(select(func.count(FloatingIp.owner)).where(FloatingIp.pool_id == pool.id))
    if used:
        raise ApiError(409, "POOL_IN_USE", f"pool {name!r} has {used} allocated IPs", {"allocated": used})
    remove_network(docker, pool.docker_network)
    session.delete(pool)
    session.commit()
