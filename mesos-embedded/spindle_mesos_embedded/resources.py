"""Mesos ``Resource`` lists (v1 JSON): what the agent has, what is in use, what is free."""
import copy
from typing import Any

Resource = dict[str, Any]


def mount_root(resource: Resource) -> str | None:
    source = resource.get("disk", {}).get("source", {})
    return source.get("mount", {}).get("root") if source.get("type") == "MOUNT" else None


def scalar(resources: list[Resource], name: str) -> float:
    return sum(r.get("scalar", {}).get("value", 0.0) for r in resources if r.get("name") == name and not mount_root(r))


def free(total: list[Resource], used: list[Resource]) -> list[Resource]:
    """Total minus used: scalars by name (cpus, mem, plain disk), whole MOUNT disks by root."""
    used_roots = {mount_root(r) for r in used} - {None}
    result = []
    for resource in total:
        root = mount_root(resource)
        if root:
            if root not in used_roots:
                result.append(copy.deepcopy(resource))
        elif resource.get("type") == "SCALAR":
            left = resource["scalar"]["value"] - scalar(used, resource["name"])
            if left > 1e-6:
                result.append({**copy.deepcopy(resource), "scalar": {"value": round(left, 4)}})
    return result


def for_role(resources: list[Resource], role: str) -> list[Resource]:
    """Resources as offered to a MULTI_ROLE framework: each carries the role it is allocated to."""
    return [{**r, "allocation_info": {"role": role}} for r in resources]


def strip_allocation(resources: list[Resource]) -> list[Resource]:
    return [{k: v for k, v in r.items() if k != "allocation_info"} for r in resources]


def contains(offered: list[Resource], wanted: list[Resource]) -> str | None:
    """None if ``wanted`` fits in ``offered``; else what does not."""
    roots = {mount_root(r) for r in offered} - {None}
    for resource in wanted:
        root = mount_root(resource)
        if root and root not in roots:
            return f"disk {root} is not in the offer"
    for name in {r["name"] for r in wanted if r.get("type") == "SCALAR" and not mount_root(r)}:
        if scalar(wanted, name) > scalar(offered, name) + 1e-6:
            return f"{name}: asks {scalar(wanted, name):g}, offer has {scalar(offered, name):g}"
    return None
