"""Mesos v1 offers (JSON, as in mesos/v1/mesos.proto ``Offer``) → what placement needs."""
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class OfferedDisk:
    """One whole MOUNT disk in an offer, with the resource exactly as offered (reused in LAUNCH)."""

    root: str
    size_mb: float
    resource: dict[str, Any]


@dataclass
class ParsedOffer:
    offer_id: str
    agent_id: str
    hostname: str
    cpus: float = 0.0
    mem_mb: float = 0.0
    disks: list[OfferedDisk] = field(default_factory=list)
    # The offered cpus/mem resources, kept to carve a task's share with the same role/reservations.
    scalars: dict[str, dict[str, Any]] = field(default_factory=dict)


def parse_offer(offer: dict[str, Any]) -> ParsedOffer:
    """Sum cpus and mem, list MOUNT disks by root; other resources are ignored."""
    parsed = ParsedOffer(offer["id"]["value"], offer["agent_id"]["value"], offer["hostname"])
    for resource in offer.get("resources", []):
        name, value = resource.get("name"), resource.get("scalar", {}).get("value", 0.0)
        if name == "cpus":
            parsed.cpus += value
            parsed.scalars.setdefault("cpus", resource)
        elif name == "mem":
            parsed.mem_mb += value
            parsed.scalars.setdefault("mem", resource)
        elif name == "disk":
            source = resource.get("disk", {}).get("source", {})
            if source.get("type") == "MOUNT":
                parsed.disks.append(OfferedDisk(source["mount"]["root"], value, resource))
    return parsed


def scalar_like(offered: dict[str, Any], value: float) -> dict[str, Any]:
    """A share of an offered scalar resource: same name, role and reservations, new amount."""
    resource = {k: v for k, v in offered.items() if k != "scalar"}
    resource["scalar"] = {"value": round(value, 3)}
    return resource
