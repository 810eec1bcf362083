"""``GET /capacity``: free whole disks per class, as any signed-in user sees them."""
from collections import Counter

from tests.integration.api.conftest import bearer


def test_capacity_counts_free_and_in_service_disks_per_class(api, make_user):
    user, admin = bearer(make_user("alice")), bearer(make_user("root-admin", is_admin=True))
    disks = api.get("/admin/disks", params={"page_size": 1000}, headers=admin).json()["items"]
    capacity = {c["disk_class"]: c for c in api.get("/capacity", headers=user).json()["disks"]}
    assert set(capacity) == {"hdd", "ssd", "nvme"}
    free = Counter(d["disk_class"] for d in disks if d["state"] == "free")
    in_service = Counter(d["disk_class"] for d in disks if d["state"] not in ("failed", "retired"))
    for disk_class, row in capacity.items():
        assert (row["free"], row["total"]) == (free[disk_class], in_service[disk_class])
    assert capacity["hdd"]["total"] >= 4, "deploy/up creates 4 hdd development disks"
    assert api.get("/capacity").status_code == 401
