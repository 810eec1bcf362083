"""The agent --resources JSON follows mesos.proto's Resource: MOUNT disks reserved to spindle."""
from types import SimpleNamespace

from spindle_disk.mesos_resources import agent_resources


def disk(state, mount, size=4 << 30):
    return SimpleNamespace(state=state, mount_point=mount, size_bytes=size)


def test_one_mount_disk_per_free_or_allocated_disk_plus_cpus_and_mem():
    disks = [disk("allocated", "/d/disk2"), disk("free", "/d/disk1", 2 << 40), disk("wiping", "/d/disk3"),
             disk("failed", "/d/disk4"), disk("retired", "/d/disk5")]
    resources = agent_resources(disks, cpus=2, mem_mb=23000)
    assert resources == [
        {"name": "cpus", "type": "SCALAR", "scalar": {"value": 2}},
        {"name": "mem", "type": "SCALAR", "scalar": {"value": 23000}},
        {"name": "disk", "type": "SCALAR", "scalar": {"value": 2 * 1024 * 1024},
         "disk": {"source": {"type": "MOUNT", "mount": {"root": "/d/disk1"}}},
         "reservations": [{"type": "STATIC", "role": "spindle"}]},
        {"name": "disk", "type": "SCALAR", "scalar": {"value": 4096},
         "disk": {"source": {"type": "MOUNT", "mount": {"root": "/d/disk2"}}},
         "reservations": [{"type": "STATIC", "role": "spindle"}]},
    ]


def test_unknown_cpus_and_mem_are_left_out():
    assert [r["name"] for r in agent_resources([disk("free", "/d/a")])] == ["disk"]
