"""``GET /capacity``: how many whole disks of each class are free now (what a launch form shows)."""
from collections import Counter

from fastapi import APIRouter
from pydantic import BaseModel

from spindle_api.api.deps import CurrentUser, SettingsDep
from spindle_api.upstream import UpstreamClient, actor_of, service_url
from spindle_common.clients import DiskClient
from spindle_common.contracts import DISK_CLASSES, DiskClass
from spindle_common.errors import error_responses

router = APIRouter(tags=["capacity"])

# Disk states that will never be handed out as they are (an admin has to act on them).
OUT_OF_SERVICE = ("failed", "retired")


class _DiskInventory(UpstreamClient, DiskClient):
    """disk-service's disk listing (all pages); its failures reach the caller as 502."""


class DiskClassCapacity(BaseModel):
    disk_class: DiskClass
    free: int
    total: int  # in service: every disk of the class except failed and retired ones


class Capacity(BaseModel):
    disks: list[DiskClassCapacity]


@router.get("/capacity", responses=error_responses(401, 502, 503))
def capacity(user: CurrentUser, settings: SettingsDep) -> Capacity:
    """Free and in-service whole disks per class, over every node."""
    client = _DiskInventory("disk-service", service_url(settings, "disk-service"), settings.internal_token,
                            actor=actor_of(user), identity_key=settings.identity_key)
    try:
        disks = client.disks()
    finally:
        client.close()
    free = Counter(d["disk_class"] for d in disks if d["state"] == "free")
    total = Counter(d["disk_class"] for d in disks if d["state"] not in OUT_OF_SERVICE)
    return Capacity(disks=[DiskClassCapacity(disk_class=DiskClass(c), free=free[c], total=total[c])
                           for c in DISK_CLASSES])
