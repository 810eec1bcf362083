"""The node agent's pure decisions: which disks to wipe, what to report, which pools need a network,
when to discover again, whether the registered node is this one."""
from datetime import UTC, datetime

import pytest

from spindle_node_agent.decisions import (
    PoolNetwork,
    classes_for_new_disks,
    discovery_due,
    disks_to_mount,
    disks_to_wipe,
    pool_networks,
    registration_conflict,
    stale_containers,
    wipe_report,
)


def disk(id_, node="n1", state="wiping"):
    return {"id": id_, "node": node, "state": state, "device_path": f"/dev/loop{id_}",
            "mount_point": f"/srv/{node}/disk{id_}", "fs_type": "xfs", "fs_label": f"spdl-{id_}"}


@pytest.mark.parametrize("disks,wanted", [
    ([], []),
    ([disk(3), disk(1), disk(2)], [1, 2, 3]),  # by id
    ([disk(1), disk(2, state="free"), disk(3, state="allocated"), disk(4, state="failed"), disk(5, state="retired")],
     [1]),
    ([disk(1, node="n2"), disk(2), disk(3, node="n10")], [2]),  # never another node's, whatever the list says
    ([disk(1, node="n2", state="free")], []),
])
def test_only_this_nodes_wiping_disks_are_wiped(disks, wanted):
    assert [d["id"] for d in disks_to_wipe(disks, "n1")] == wanted


@pytest.mark.parametrize("reason,body", [
    (None, {"ok": True}),
    ("umount /srv/n1/disk1 exited 32: target is busy", {"ok": False,
                                                         "reason": "wipe failed: umount /srv/n1/disk1 exited 32: "
                                                                   "target is busy"}),
    ("x" * 2000, {"ok": False, "reason": ("wipe failed: " + "x" * 2000)[:1024]}),  # WipeResult.reason max length
])
def test_the_wipe_report_says_ok_or_why_not(reason, body):
    assert wipe_report(reason) == body


@pytest.mark.parametrize("last,now,due", [
    (None, 0.0, True),  # at start
    (100.0, 100.0, False),
    (100.0, 129.9, False),
    (100.0, 130.0, True),
    (100.0, 500.0, True),
])
def test_discovery_runs_at_start_then_every_interval(last, now, due):
    assert discovery_due(last, now, 30.0) is due


NODE = {"name": "n1", "address": "10.77.0.11", "disk_root": "/srv/n1/disks", "cpus": None, "mem_mb": None}


@pytest.mark.parametrize("known,conflict", [
    (NODE, None),
    ({**NODE, "cpus": 12.0, "mem_mb": 4096, "id": 3, "created_at": "2026-01-01T00:00:00Z"}, None),  # admin set them
    ({**NODE, "address": "10.77.0.12"}, "node n1 is registered with address '10.77.0.12' (this agent: '10.77.0.11')"),
    ({**NODE, "disk_root": "/srv/n2/disks"},
     "node n1 is registered with disk_root '/srv/n2/disks' (this agent: '/srv/n1/disks')"),
    ({**NODE, "address": "a", "disk_root": "/b"}, "node n1 is registered with address 'a' (this agent: '10.77.0.11'), "
                                                 "disk_root '/b' (this agent: '/srv/n1/disks')"),
])
def test_an_existing_node_is_ours_when_address_and_disk_root_match(known, conflict):
    assert registration_conflict(known, "10.77.0.11", "/srv/n1/disks") == conflict


def pool(name, driver="macvlan", parent="veth-cp"):
    n = {"a": 1, "b": 2, "c": 3}[name[-1]]
    return {"name": name, "cidr": f"10.88.{n}.0/24", "gateway": f"10.88.{n}.1", "floating_cidr": f"10.88.{n}.128/25",
            "auto_cidr": f"10.88.{n}.0/25", "driver": driver, "parent": parent if driver == "macvlan" else None,
            "docker_network": f"spindle-{name}", "floating_total": 127, "floating_used": 0}


def net(name, exists):
    p = pool(name)
    return PoolNetwork(pool=name, docker_network=f"spindle-{name}", cidr=p["cidr"], gateway=p["gateway"],
                       auto_cidr=p["auto_cidr"], parent="fab0", exists=exists)


@pytest.mark.parametrize("pools,existing,wanted", [
    ([], [], []),
    ([pool("default-a", driver="bridge")], [], []),  # bridge pools are the control plane host's only
    ([pool("mv-a")], [], [net("mv-a", False)]),
    ([pool("mv-a")], ["spindle-mv-a", "bridge"], [net("mv-a", True)]),
    ([pool("mv-b"), pool("default-c", driver="bridge"), pool("mv-a")], ["spindle-default-c", "spindle-mv-b"],
     [net("mv-a", False), net("mv-b", True)]),
])
def test_every_macvlan_pool_needs_its_network_on_the_nodes_fabric(pools, existing, wanted):
    assert pool_networks(pools, existing, "fab0") == wanted


def test_the_pools_own_parent_is_the_control_planes_and_never_used():
    (network,) = pool_networks([pool("mv-a", parent="veth-on-control-plane")], [], "fab7")
    assert network.parent == "fab7"


CLASSES = {"spdl-n1-1": "hdd", "spdl-n1-2": "ssd", "/srv/n1/disks/disk3": "nvme", "/dev/loop4": "hdd", "SER5": "ssd"}


@pytest.mark.parametrize("known,wanted", [
    ([], CLASSES),  # a new node: every configured class goes along
    ([disk(1) | {"fs_label": "spdl-n1-1", "mount_point": "/srv/n1/disks/disk1", "serial": None}],
     {k: v for k, v in CLASSES.items() if k != "spdl-n1-1"}),
    ([disk(3) | {"fs_label": "spdl-x", "mount_point": "/srv/n1/disks/disk3", "serial": None},
      disk(4) | {"fs_label": None, "mount_point": "/srv/n1/disks/disk4", "serial": None},
      disk(5) | {"fs_label": None, "mount_point": "/srv/n1/disks/disk5", "serial": "SER5"}],
     {"spdl-n1-1": "hdd", "spdl-n1-2": "ssd"}),  # known by mount point, device path, serial
])
def test_configured_classes_go_only_with_disks_disk_service_does_not_know_yet(known, wanted):
    assert classes_for_new_disks(CLASSES, known) == wanted


NOW = datetime(2026, 11, 25, 1, 0, 0, tzinfo=UTC)


def _container(cid: str, running: bool, finished: str, labels: dict | None = None) -> dict:
    return {"Id": cid, "Config": {"Labels": {"io.spindle.cluster": "c1"} if labels is None else labels},
            "State": {"Running": running, "FinishedAt": finished}}


@pytest.mark.parametrize(("container", "stale"), [
    (_container("old", False, "2026-11-25T00:58:00.123456789Z"), True),       # stopped 2 minutes ago
    (_container("fresh", False, "2026-11-25T00:59:30.5Z"), False),            # its executor may still read it
    (_container("running", True, "2026-11-25T00:00:00Z"), False),             # never a running one
    (_container("never", False, "0001-01-01T00:00:00Z"), False),              # created, never started
    (_container("foreign", False, "2026-11-25T00:00:00Z", labels={}), False),  # not Spindle's
    (_container("garbled", False, "yesterday"), False),
])
def test_stale_containers_are_spindles_stopped_over_a_minute_ago(container, stale):
    assert stale_containers([container], NOW) == (["old"] if stale else [])


def _dev(path, label, fstype="xfs", mountpoint=None, children=()):
    return {"path": path, "label": label, "fstype": fstype, "mountpoint": mountpoint, "type": "loop",
            "children": list(children)}


@pytest.mark.parametrize(("device", "mounted_at"), [
    (_dev("/dev/loop1", "spdl-n1-1"), "/srv/n1/disks/spdl-n1-1"),            # ours, mounted nowhere: mount
    (_dev("/dev/loop2", "spdl-n1-2", fstype="ext4"), "/srv/n1/disks/spdl-n1-2"),
    (_dev("/dev/loop3", "spdl-n1-3", mountpoint="/srv/n1/disks/x"), None),   # mounted already
    (_dev("/dev/loop4", "spdl-n2-1"), None),                                  # another node's prefix
    (_dev("/dev/loop5", "data"), None),                                       # not Spindle's
    (_dev("/dev/loop6", "spdl-n1-6", fstype="vfat"), None),                   # not a filesystem Spindle makes
    (_dev("/dev/loop7", "spdl-n1-7", fstype=None), None),                     # blank
    ({"path": "/dev/sda", "type": "disk", "children": [_dev("/dev/sda1", "spdl-n1-p")]}, "/srv/n1/disks/spdl-n1-p"),
])
def test_disks_to_mount_are_this_nodes_unmounted_spindle_filesystems(device, mounted_at):
    found = disks_to_mount({"blockdevices": [device]}, "spdl-n1-", "/srv/n1/disks")
    assert [m.mount_point for m in found] == ([mounted_at] if mounted_at else [])


def test_a_label_that_is_no_safe_folder_name_is_never_mounted():
    assert disks_to_mount({"blockdevices": [_dev("/dev/loop1", "spdl-../x")]}, "spdl-", "/srv/disks") == []
