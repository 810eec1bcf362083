"""Discovery picks up only devices prepared for Spindle, never the root disk or anything else."""
from spindle_disk.discovery import admin_class, detect_class, discover, is_below

ROOT = "/var/lib/spindle/disks"


def dev(name, mount=None, label=None, rota=False, tran=None, type_="disk", size=4 << 30, fstype="xfs", **extra):
    return {"name": name, "path": f"/dev/{name}", "serial": extra.get("serial"), "size": size, "rota": rota,
            "tran": tran, "type": type_, "mountpoint": mount, "fstype": fstype, "label": label,
            "model": extra.get("model"), "children": extra.get("children")}


def paths(found):
    return sorted(d.device_path for d in found)


def test_this_machines_real_layout_yields_nothing():
    lsblk = {"blockdevices": [dev("zram0", size=0, fstype=None), dev("vda", mount="/", rota=True, fstype=None)]}
    found, ignored = discover(lsblk, ROOT)
    assert found == []
    assert {i.device_path for i in ignored} == {"/dev/zram0", "/dev/vda"}


def test_mounted_below_disk_root_or_labelled_is_picked_up():
    lsblk = {"blockdevices": [
        dev("loop0", mount=f"{ROOT}/disk1", label="spdl-1", type_="loop"),
        dev("sdb", mount=f"{ROOT}/disk2", label=None, rota=True),
        dev("sdc", mount="/mnt/data7", label="spdl-7"),
        dev("sdd", mount="/mnt/other", label="backup"),
    ]}
    found, ignored = discover(lsblk, ROOT)
    assert paths(found) == ["/dev/loop0", "/dev/sdb", "/dev/sdc"]
    assert [i.device_path for i in ignored] == ["/dev/sdd"]


def test_system_mounts_are_refused_even_with_a_spindle_label():
    lsblk = {"blockdevices": [dev("sda", mount="/", label="spdl-1"), dev("sdb", mount="/boot", label="spdl-2"),
                              dev("sdc", mount="[SWAP]", label="spdl-3", fstype="swap")]}
    found, ignored = discover(lsblk, ROOT)
    assert found == [] and all("system path" in i.reason for i in ignored)


def test_lookalike_paths_and_the_disk_root_itself_are_not_below_it():
    assert is_below(f"{ROOT}/disk1", ROOT) and is_below(f"{ROOT}/a/../disk1", ROOT)
    assert not is_below(ROOT, ROOT)
    assert not is_below(f"{ROOT}-evil/disk1", ROOT)
    assert not is_below(f"{ROOT}/../../etc", ROOT)
    assert not is_below("/etc", "/")


def test_partitions_are_found_inside_their_disk_and_unmounted_ones_skipped():
    lsblk = {"blockdevices": [dev("sda", rota=True, fstype=None, children=[
        dev("sda1", mount="/", type_="part"),
        dev("sda2", mount=f"{ROOT}/disk3", type_="part", rota=True),
        dev("sda3", label="spdl-9", type_="part"),
    ])]}
    found, ignored = discover(lsblk, ROOT)
    assert paths(found) == ["/dev/sda2"]
    reasons = {i.device_path: i.reason for i in ignored}
    assert reasons["/dev/sda3"] == "prepared for Spindle but not mounted"
    assert "system path" in reasons["/dev/sda1"]


def test_newer_lsblk_shapes_are_understood():
    device = dev("sdb", label="spdl-2", rota="1", size="4294967296")
    device.pop("mountpoint")
    device["mountpoints"] = [None, "/srv/spindle/d2"]
    (found,), _ = discover({"blockdevices": [device]}, ROOT)
    assert (found.mount_point, found.size_bytes, found.rotational, found.detected_class) == \
        ("/srv/spindle/d2", 4 << 30, True, "hdd")


def test_class_is_detected_and_the_admin_may_override_it():
    assert detect_class({"name": "nvme0n1", "rota": False}) == "nvme"
    assert detect_class({"name": "sdx", "tran": "nvme", "rota": False}) == "nvme"
    assert detect_class({"name": "sda", "rota": True}) == "hdd"
    assert detect_class({"name": "sda", "rota": False}) == "ssd"
    (found,), _ = discover({"blockdevices": [dev("loop3", mount=f"{ROOT}/disk4", label="spdl-4", type_="loop")]}, ROOT)
    assert found.detected_class == "ssd" and admin_class(found, {}) is None
    assert admin_class(found, {"spdl-4": "hdd"}) == "hdd"
    assert admin_class(found, {f"{ROOT}/disk4": "nvme", "/dev/loop3": "hdd"}) == "nvme"
