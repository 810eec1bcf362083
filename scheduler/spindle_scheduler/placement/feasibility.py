"""Feasibility: can a node (as it is now, during placement) take a member? Each checker returns
``None`` when it can, or the ``Reason`` it cannot — the same objects users see."""
from collections.abc import Callable

from spindle_scheduler.placement.model import MemberRequest, PlacementRequest, Reason
from spindle_scheduler.placement.state import NodeState

Checker = Callable[[NodeState, MemberRequest, PlacementRequest], Reason | None]
# Float cpus/mem are sums of request shares: tolerate rounding, never real over-commit.
EPSILON = 1e-9


def _num(value: float) -> str:
    return f"{value:g}"


def check_excluded(node: NodeState, _: MemberRequest, request: PlacementRequest) -> Reason | None:
    if node.name in request.excluded_hosts:
        return Reason(node.name, "excluded", "excluded by the launch's placement (excluded_nodes)")
    return None


def check_pinned(node: NodeState, member: MemberRequest, _: PlacementRequest) -> Reason | None:
    """A member on kept disks goes to their node, once every one of them is offered."""
    if node.name != member.pinned_node:
        return Reason(node.name, "pinned", f"its kept disks are on node {member.pinned_node}")
    offered = {disk_id for ids in node.disks.values() for disk_id in ids}
    missing = [d for d in member.pinned_disks if d not in offered]
    if missing:
        return Reason(node.name, "disks", f"its kept disks {', '.join(missing)} are not offered now")
    return None


def check_cpus(node: NodeState, member: MemberRequest, _: PlacementRequest) -> Reason | None:
    if member.cpus > node.cpus + EPSILON:
        return Reason(node.name, "cpus", f"needs {_num(member.cpus)} cpus, {_num(node.cpus)} free")
    return None


def check_mem(node: NodeState, member: MemberRequest, _: PlacementRequest) -> Reason | None:
    if member.mem_mb > node.mem_mb + EPSILON:
        return Reason(node.name, "mem", f"needs {_num(member.mem_mb)} MiB memory, {_num(node.mem_mb)} free")
    return None


def check_disks(node: NodeState, member: MemberRequest, _: PlacementRequest) -> Reason | None:
    for disk_class, count in member.disks.items():
        if not count:
            continue
        free = len(node.disks.get(disk_class, ()))
        if count > free:
            return Reason(node.name, "disks", f"needs {count} {disk_class} disk{'s' if count > 1 else ''}, {free} free")
    return None


def check_cpuset(node: NodeState, member: MemberRequest, _: PlacementRequest) -> Reason | None:
    if not member.cpuset:
        return None
    largest = max((len(cpus) for cpus in node.numa.values()), default=0)
    if member.cpuset > largest:
        return Reason(node.name, "cpuset", f"no NUMA node with {member.cpuset} free cpus (largest: {largest})")
    return None


def check_anti_affinity(node: NodeState, member: MemberRequest, request: PlacementRequest) -> Reason | None:
    # node.roles: members running there (NodeOffer.running) and those this request placed there.
    if request.apart(member.role) and (request.cluster_id, member.role) in node.roles:
        kind = "anti-affinity" if member.role in request.anti_affinity_roles else "replicas apart"
        return Reason(node.name, "anti_affinity", f"already has a member of role {member.role} of cluster "
                                                  f"{request.cluster_id} ({kind}: one per node)")
    return None


# An excluded node says so first: whatever else it lacks does not matter.
CHECKERS: tuple[Checker, ...] = (check_excluded, check_pinned, check_cpus, check_mem, check_disks, check_cpuset,
                                 check_anti_affinity)


def checkers_for_all(member: MemberRequest) -> tuple[Checker, ...]:
    """Every checker, as they apply to ``member``: a pinned member's disks are checked by check_pinned."""
    if member.pinned_node:
        return tuple(c for c in CHECKERS if c is not check_disks)
    return tuple(c for c in CHECKERS if c is not check_pinned)


def checkers_for(member: MemberRequest, request: PlacementRequest) -> tuple[Checker, ...]:
    """The checkers that can fail for ``member``: the others pass on every node, so placement
    skips them (a member without disks, cpuset or anti-affinity, of a request that excludes no node,
    is checked for cpus and mem only)."""
    checkers: list[Checker] = [check_excluded] if request.excluded_hosts else []
    if member.pinned_node:  # its kept disks are its disks: no fresh ones are asked of any node
        checkers.append(check_pinned)
    checkers += [check_cpus, check_mem]
    if any(member.disks.values()) and not member.pinned_node:
        checkers.append(check_disks)
    if member.cpuset:
        checkers.append(check_cpuset)
    if request.apart(member.role):
        checkers.append(check_anti_affinity)
    return tuple(checkers)


def infeasibility(node: NodeState, member: MemberRequest, request: PlacementRequest,
                  checkers: tuple[Checker, ...] | None = None) -> Reason | None:
    """The first constraint ``node`` fails for ``member`` of ``request``, or None if it fits (every
    checker that applies to the member, unless ``checkers`` says which)."""
    for checker in checkers if checkers is not None else checkers_for_all(member):
        reason = checker(node, member, request)
        if reason:
            return reason
    return None
