"""Shared by disk-service integration tests: callers' headers and an inventory builder."""
from tests.support.internal import internal_headers

TOKEN = "disk-tests-internal-token"
ADMIN = internal_headers(TOKEN, "test-admin", "admin")
SERVICE = internal_headers(TOKEN, "scheduler", "service")
USER = internal_headers(TOKEN, "alice", "user")


def fake_lsblk(disk_root: str, classes: dict[str, int], size: int = 4 << 30) -> dict:
    """lsblk --json of a node with the root disk plus Spindle disks: e.g. {"hdd": 4, "ssd": 2}."""
    devices = [{"name": "vda", "path": "/dev/vda", "serial": None, "size": 256 << 30, "rota": True, "tran": None,
                "type": "disk", "mountpoint": "/", "fstype": "ext4", "label": None, "model": None}]
    n = 0
    for disk_class, count in classes.items():
        for _ in range(count):
            n += 1
            devices.append({"name": f"sd{n}", "path": f"/dev/sd{n}", "serial": f"SER{n:04d}", "size": size,
                            "rota": disk_class == "hdd", "tran": "sata", "type": "disk",
                            "mountpoint": f"{disk_root}/disk{n}", "fstype": "xfs", "label": f"spdl-{n}",
                            "model": "TESTDISK"})
    return {"blockdevices": devices}


def add_node(client, name: str, classes: dict[str, int], address: str = "10.0.0.1") -> list[dict]:
    """Register a (remote) node and discover its disks from posted lsblk output; returns the disks."""
    root = f"/srv/spindle/{name}"
    r = client.post("/nodes", json={"name": name, "address": address, "disk_root": root, "cpus": 12,
                                    "mem_mb": 65536}, headers=ADMIN)
    assert r.status_code == 201, r.text
    r = client.post(f"/nodes/{name}/discover", json={"lsblk": fake_lsblk(root, classes)}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return r.json()["registered"]
