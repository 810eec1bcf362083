"""Discovery picks up only devices prepared for Spindle, never the root disk or anything else."""
import pytest

from spindle_disk.discovery import admin_class, detect_class, discover, is_below, rejection

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


def test_mounted_below_disk_root_labelled_or_not_is_picked_up():
    lsblk = {"blockdevices": [
        dev("loop0", mount=f"{ROOT}/disk1", label="spdl-1", type_="loop"),
        dev("sdb", mount=f"{ROOT}/disk2", label=None, rota=True),
        dev("sdc", mount=f"{ROOT}/deeper/disk7", label="spdl-7"),
        dev("sdd", mount="/mnt/other", label="backup"),
    ]}
    found, ignored = discover(lsblk, ROOT)
    assert paths(found) == ["/dev/loop0", "/dev/sdb", "/dev/sdc"]
    assert [i.device_path for i in ignored] == ["/dev/sdd"]


OTHER_NODE = "mounted at {mount}, outside this node's disk root {root}: another node's disk"


# Simulated nodes share one kernel: every node's lsblk lists every node's disks. A Spindle-labelled
# disk mounted, but not below this node's disk root, is another node's; unmounted ones are as before.
@pytest.mark.parametrize("mount,label,reason", [
    (f"{ROOT}/disk1", "spdl-1", None),
    (f"{ROOT}/a/b/disk1", "spdl-1", None),
    (f"{ROOT}/disk2", None, None),
    ("/mnt/data7", "spdl-7", OTHER_NODE.format(mount="/mnt/data7", root=ROOT)),
    ("/var/lib/spindle/node-2/disks/disk1", "spdl-1",
     OTHER_NODE.format(mount="/var/lib/spindle/node-2/disks/disk1", root=ROOT)),
    (f"{ROOT}-node2/disk1", "spdl-1", OTHER_NODE.format(mount=f"{ROOT}-node2/disk1", root=ROOT)),  # lookalike
    (f"{ROOT}/../node2/disk1", "spdl-1", OTHER_NODE.format(mount=f"{ROOT}/../node2/disk1", root=ROOT)),
    (ROOT, "spdl-1", OTHER_NODE.format(mount=ROOT, root=ROOT)),  # the root itself is not below it
    (None, "spdl-3", "prepared for Spindle but not mounted"),
    ("/mnt/data7", None, f"neither labelled spdl-* nor mounted below {ROOT}"),
    ("/mnt/data7", "backup", f"neither labelled spdl-* nor mounted below {ROOT}"),
    ("/", "spdl-1", "mounted on system path /"),
    ("/var", "spdl-1", "mounted on system path /var"),
])
def test_labelled_disks_count_only_below_this_nodes_disk_root(mount, label, reason):
    assert rejection(dev("sdx", mount=mount, label=label), ROOT) == reason
    found, ignored = discover({"blockdevices": [dev("sdx", mount=mount, label=label)]}, ROOT)
    assert (paths(found), [i.reason for i in ignored]) == ((["/dev/sdx"], []) if reason is None else ([], [reason]))


def test_each_simulated_node_takes_only_its_own_disks_from_the_shared_lsblk():
    shared = {"blockdevices": [
        dev("loop0", mount="/srv/n1/disks/disk1", label="spdl-1", type_="loop"),
        dev("loop1", mount="/srv/n1/disks/disk2", label="spdl-2", type_="loop"),
        dev("loop2", mount="/srv/n2/disks/disk1", label="spdl-3", type_="loop"),
        dev("loop3", label="spdl-4", type_="loop"),
    ]}
    mine = {root: paths(discover(shared, root)[0]) for root in ("/srv/n1/disks", "/srv/n2/disks", "/srv/n3/disks")}
    assert mine == {"/srv/n1/disks": ["/dev/loop0", "/dev/loop1"], "/srv/n2/disks": ["/dev/loop2"],
                    "/srv/n3/disks": []}


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
    device["mountpoints"] = [None, f"{ROOT}/d2"]
    (found,), _ = discover({"blockdevices": [device]}, ROOT)
    assert (found.mount_point, found.size_bytes, found.rotational, found.detected_class) == \
        (f"{ROOT}/d2", 4 << 30, True, "hdd")


def test_class_is_detected_and_the_admin_may_override_it():
    assert detect_class({"name": "nvme0n1", "rota": False}) == "nvme"
    assert detect_class({"name": "sdx", "tran": "nvme", "rota": False}) == "nvme"
    assert detect_class({"name": "sda", "rota": True}) == "hdd"
    assert detect_class({"name": "sda", "rota": False}) == "ssd"
    (found,), _ = discover({"blockdevices": [dev("loop3", mount=f"{ROOT}/disk4", label="spdl-4", type_="loop")]}, ROOT)
    assert found.detected_class == "ssd" and admin_class(found, {}) is None
    assert admin_class(found, {"spdl-4": "hdd"}) == "hdd"
    assert admin_class(found, {f"{ROOT}/disk4": "nvme", "/dev/loop3": "hdd"}) == "nvme"
