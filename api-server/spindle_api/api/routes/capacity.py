"""``GET /capacity``: how many whole disks of each class are free now (what a launch form shows)."""
from collections import Counter

from fastapi import APIRouter
from pydantic import BaseModel

from spindle_api.api.deps import CurrentUser, SettingsDep
from spindle_api.upstream import service_url
from spindle_common.catalog import DISK_CLASSES
from spindle_common.clients import DiskClient

router = APIRouter(tags=["capacity"])

# Disk states that will never be handed out as they are (an admin has to act on them).
OUT_OF_SERVICE = ("failed", "retired")


class DiskClassCapacity(BaseModel):
    disk_class: str
    free: int
    total: int  # in service: every disk of the class except failed and retired ones


class Capacity(BaseModel):
    disks: list[DiskClassCapacity]


@router.get("/capacity")
def capacity(user: CurrentUser, settings: SettingsDep) -> Capacity:
    """Free and in-service whole disks per class, over every node."""
    client = DiskClient(service_url(settings, "disk-service"), settings.internal_token, actor=user.username)
    try:
        disks = client.disks()
    finally:
        client.close()
    free = Counter(d["disk_class"] for d in disks if d["state"] == "free")
    total = Counter(d["disk_class"] for d in disks if d["state"] not in OUT_OF_SERVICE)
    return Capacity(disks=[DiskClassCapacity(disk_class=c, free=free[c], total=total[c]) for c in DISK_CLASSES])
