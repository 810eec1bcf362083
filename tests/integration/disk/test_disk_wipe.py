"""Release really wipes: on a real loop device (created here, labelled spdl-…, removed after),
a file written by the owner is gone after release, and the disk is free and mounted again."""
import json
import subprocess
import time

import pytest
from disk_helpers import ADMIN, SERVICE

from spindle_disk import blockdev
from tests.support.loop_disks import loop_disk as real_loop_disk
from tests.support.loop_disks import sh


@pytest.fixture
def loop_disk(tmp_path):
    """A 512 MiB sparse file on a direct-I/O loop device with XFS labelled spdl-…, mounted below a disk root."""
    with real_loop_disk(tmp_path / "wipe.img", tmp_path / "disks" / "disk1") as disk:
        yield disk


def wait_for_state(api, disk_id: int, wanted: str, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        disk = api.get(f"/disks/{disk_id}", headers=ADMIN).json()
        if disk["state"] != "wiping":
            assert disk["state"] == wanted, disk
            return disk
        time.sleep(0.2)
    raise AssertionError(f"disk {disk_id} still wiping after {timeout}s")


def register_local(api, loop_disk) -> dict:
    """This machine as a node with only our loop disk (its lsblk posted), so no other disk is touched."""
    assert api.post("/nodes", json={"name": "local", "address": "127.0.0.1", "disk_root": loop_disk["root"]},
                    headers=ADMIN).status_code == 201
    body = {"lsblk": blockdev.lsblk(loop_disk["device"]), "classes": {loop_disk["label"]: "hdd"}}
    (disk,) = api.post("/nodes/local/discover", json=body, headers=ADMIN).json()["registered"]
    assert (disk["mount_point"], disk["disk_class"], disk["state"]) == (loop_disk["mount"], "hdd", "free")
    return disk


def test_local_discovery_finds_spindle_disks_and_never_the_root_disk(api, loop_disk):
    """With no lsblk posted, disk-service runs it on this machine (dev disks may be found too)."""
    api.post("/nodes", json={"name": "here", "address": "127.0.0.1", "disk_root": loop_disk["root"]}, headers=ADMIN)
    result = api.post("/nodes/here/discover", json={}, headers=ADMIN).json()
    registered = {d["device_path"]: d for d in result["registered"]}
    root_sources = {fs["source"] for fs in json.loads(sh("findmnt", "--json", "-o", "SOURCE", "/"))["filesystems"]}
    assert root_sources and not root_sources & set(registered)
    assert root_sources <= {i["device_path"] for i in result["ignored"]}
    assert all(d["fs_label"].startswith("spdl-") or d["mount_point"].startswith(loop_disk["root"] + "/")
               for d in registered.values())
    assert registered[loop_disk["device"]]["fs_label"] == loop_disk["label"]


def test_release_wipes_the_disk_and_frees_it(api, loop_disk):
    disk = register_local(api, loop_disk)
    r = api.post("/allocations", json={"node": "local", "disk_class": "hdd", "count": 1, "owner": "wipe-test/m0"},
                 headers=SERVICE)
    assert r.status_code == 201 and r.json()["disks"][0]["id"] == disk["id"]
    secret = f"{loop_disk['mount']}/owner-data.bin"
    with open(secret, "wb") as f:
        f.write(b"x" * (8 << 20))
    sh("sync")

    released = api.post("/allocations/release", json={"owner": "wipe-test/m0"}, headers=SERVICE)
    assert released.status_code == 200 and released.json()[0]["state"] == "wiping"
    wait_for_state(api, disk["id"], "free")

    assert sh("ls", "-A", loop_disk["mount"]) == ""
    mounted = json.loads(sh("findmnt", "--json", "-o", "SOURCE,FSTYPE,LABEL", loop_disk["mount"]))["filesystems"][0]
    assert mounted == {"source": loop_disk["device"], "fstype": "xfs", "label": loop_disk["label"]}
    log = api.get(f"/disks/{disk['id']}/transitions", headers=ADMIN).json()
    assert [(t["from_state"], t["to_state"], t["actor"]) for t in log][-3:] == [
        ("free", "allocated", "scheduler"), ("allocated", "wiping", "scheduler"),
        ("wiping", "free", "disk-service/wipe")]


def test_a_wipe_waits_out_a_mount_namespace_that_still_holds_the_disk_a_moment(api, loop_disk):
    """CI run 4's failed disk: runc, starting a container on the node, holds a copy of every mount
    until the container's root is in place, so the wipe's mkfs found the just-unmounted device busy.
    Here a mount namespace made by `unshare` holds that copy until the test ends it."""
    disk = register_local(api, loop_disk)
    api.post("/allocations", json={"node": "local", "disk_class": "hdd", "count": 1, "owner": "m0"}, headers=SERVICE)
    with open(f"{loop_disk['mount']}/owner-data", "w") as f:
        f.write("x")
    holder = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sleep", "infinity"])
    try:
        deadline = time.monotonic() + 30
        while not any(loop_disk["mount"] in line.split()[4:5] for line in _mountinfo(holder.pid)):
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        api.post("/allocations/release", json={"owner": "m0"}, headers=SERVICE)
        while subprocess.run(["mountpoint", "-q", loop_disk["mount"]]).returncode == 0:  # unmounted here
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert api.get(f"/disks/{disk['id']}", headers=ADMIN).json()["state"] == "wiping"  # mkfs: busy
    finally:
        holder.kill()
        holder.wait()
    wait_for_state(api, disk["id"], "free")
    assert sh("ls", "-A", loop_disk["mount"]) == ""


def _mountinfo(pid: int) -> list[str]:
    with open(f"/proc/{pid}/mountinfo") as f:
        return f.read().splitlines()


def test_a_failed_wipe_quarantines_the_disk_until_an_admin_wipes_it(api, loop_disk):
    disk = register_local(api, loop_disk)
    api.post("/allocations", json={"node": "local", "disk_class": "hdd", "count": 1, "owner": "busy"}, headers=SERVICE)
    # A process still holding a file open keeps the filesystem busy: unmount fails, so the wipe does.
    holder = open(f"{loop_disk['mount']}/still-open", "w")
    try:
        api.post("/allocations/release", json={"owner": "busy"}, headers=SERVICE)
        failed = wait_for_state(api, disk["id"], "failed")
        assert failed["state_reason"].startswith("wipe failed: umount")
        assert sh("ls", "-A", loop_disk["mount"]) == "still-open"
    finally:
        holder.close()
    assert api.post("/allocations", json={"node": "local", "disk_class": "hdd", "count": 1, "owner": "next"},
                    headers=SERVICE).status_code == 409
    assert api.post(f"/disks/{disk['id']}/wipe", json={}, headers=ADMIN).json()["state"] == "wiping"
    wait_for_state(api, disk["id"], "free")
    assert sh("ls", "-A", loop_disk["mount"]) == ""
