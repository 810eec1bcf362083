"""Small builders of placement inputs shared by the scheduler's unit tests."""
from spindle_scheduler.placement import MemberRequest, NodeOffer, OfferedDisk, PlacementRequest
from spindle_scheduler.placement.state import NodeState


def node(name, cpus=4.0, mem=8192.0, hdd=2, ssd=0, nvme=0, numa=None, running=(), rack=""):
    disks = [OfferedDisk(f"{name}/{cls}{i}", cls, 100_000.0, f"/mnt/{cls}{i}")
             for cls, count in (("hdd", hdd), ("ssd", ssd), ("nvme", nvme)) for i in range(count)]
    return NodeOffer(name, cpus, mem, disks, numa or {}, list(running), rack)


def member(i, cpus=1.0, mem=512.0, disks=None, cpuset=None, role="worker"):
    return MemberRequest(f"m{i}", role, cpus, mem, disks if disks is not None else {"hdd": 1}, cpuset)


def request(members, cluster="c1", **options):
    return PlacementRequest(cluster, members, **options)


def states(*offers):
    return [NodeState.of(o) for o in offers]
