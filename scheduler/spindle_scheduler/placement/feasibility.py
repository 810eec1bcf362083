"""Feasibility: can a node (as it is now, during placement) take a member? Each checker returns
``None`` when it can, or the ``Reason`` it cannot — the same objects users see."""
from collections.abc import Callable

from spindle_scheduler.placement.model import MemberRequest, Reason
from spindle_scheduler.placement.state import NodeState

Checker = Callable[[NodeState, MemberRequest], Reason | None]


def _num(value: float) -> str:
    return f"{value:g}"


def check_cpus(node: NodeState, member: MemberRequest) -> Reason | None:
    if member.cpus > node.cpus + 1e-9:
        return Reason(node.name, "cpus", f"needs {_num(member.cpus)} cpus, {_num(node.cpus)} free")
    return None


def check_mem(node: NodeState, member: MemberRequest) -> Reason | None:
    if member.mem_mb > node.mem_mb + 1e-9:
        return Reason(node.name, "mem", f"needs {_num(member.mem_mb)} MiB memory, {_num(node.mem_mb)} free")
    return None


def check_disks(node: NodeState, member: MemberRequest) -> Reason | None:
    for disk_class, count in member.disks.items():
        if not count:
            continue
        free = len(node.disks.get(disk_class, ()))
        if count > free:
            return Reason(node.name, "disks", f"needs {count} {disk_class} disk{'s' if count > 1 else ''}, {free} free")
    return None


def check_cpuset(node: NodeState, member: MemberRequest) -> Reason | None:
    if not member.cpuset:
        return None
    largest = max((len(cpus) for cpus in node.numa.values()), default=0)
    if member.cpuset > largest:
        return Reason(node.name, "cpuset", f"no NUMA node with {member.cpuset} free cpus (largest: {largest})")
    return None


CHECKERS: tuple[Checker, ...] = (check_cpus, check_mem, check_disks, check_cpuset)


def infeasibility(node: NodeState, member: MemberRequest) -> Reason | None:
    """The first constraint ``node`` fails for ``member``, or None if it fits."""
    for checker in CHECKERS:
        reason = checker(node, member)
        if reason:
            return reason
    return None
