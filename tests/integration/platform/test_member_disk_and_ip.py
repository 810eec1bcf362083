"""Disk and IP as resources, end to end on the running platform: a real container gets a dedicated
loop-backed disk at /data/1 and a floating IP; another container cannot see or open that disk;
after release the disk is wiped (a file written before is gone) and free again, the IP too."""
import json
import os
import time
import uuid

import docker
import httpx
import pytest

from spindle_common.clients import DiskClient, NetworkClient
from spindle_common.errors import ApiError
from spindle_executor.container import create_and_start, remove, wait_healthy
from spindle_executor.task_spec import parse_task_spec


@pytest.fixture
def services(platform_env):
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    disks = DiskClient("http://127.0.0.1:8083", token, actor="platform-test")
    network = NetworkClient("http://127.0.0.1:8084", token, actor="platform-test")
    yield disks, network
    disks.close()
    network.close()


def spec(platform_env, owner, disk_roots, network=None, ip=None, command=None, health=None):
    return parse_task_spec(f"{owner}.t", json.dumps({
        "cluster_id": "platform-test", "member_id": owner, "image": platform_env["SPINDLE_BASE_IMAGE"], "cpus": 0.5,
        "mem_mb": 128, "disks": [{"host_path": r} for r in disk_roots], "network": network, "ip": ip,
        "command": command or ["sleep", "120"], "health": health}))


def wait_free(disks: DiskClient, disk_id: int, node: str) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        disk = next(d for d in disks.disks_of_node(node) if d["id"] == disk_id)
        if disk["state"] == "free":
            return disk
        time.sleep(0.3)
    raise AssertionError(f"disk {disk_id} not free after release: {disk['state']}")


def test_member_gets_a_dedicated_disk_and_floating_ip(platform_env, services):
    disks, network = services
    client = docker.from_env()
    owner, stranger = f"pt-{uuid.uuid4().hex[:6]}", f"pt-{uuid.uuid4().hex[:6]}"
    node = os.uname().nodename
    held = disks.allocate(node, "hdd", 1, owner)
    lease = network.allocate(owner, "default")
    member = spec(platform_env, owner, [held[0]["mount_point"]], lease["docker_network"], lease["address"],
                  ["sh", "-c",
                   "echo secret-of-$HOSTNAME > /data/1/secret && cd /data/1 && exec python3 -m http.server 8000"],
                  {"tcp_port": 8000, "timeout_seconds": 60})
    other = spec(platform_env, stranger, [])
    try:
        container = create_and_start(client, member)
        wait_healthy(container, member.health, member.ip)
        # The member's file lives on its dedicated disk, served from its floating IP.
        assert httpx.get(f"http://{lease['address']}:8000/secret", timeout=5).status_code == 200
        assert open(os.path.join(held[0]["mount_point"], "secret")).read().startswith("secret-of-")

        # Another container has no /data, no block device, and cannot mount one.
        intruder = create_and_start(client, other)
        # stdout and stderr apart: Docker does not keep their order between the two.
        probe = intruder.exec_run(["sh", "-c", "ls /data; ls /dev | grep -c loop; find / -xdev -name secret | wc -l; "
                                   f"mount {held[0]['device_path']} /mnt"], demux=True)
        out, err = (part.decode() if part else "" for part in probe.output)
        assert out.split() == ["0", "0"], (out, err)
        assert "cannot access '/data'" in err and "permission denied" in err.lower(), (out, err)
    finally:
        remove(client, member.task_id)
        remove(client, other.task_id)
        # Given back even when an assertion failed: a disk held by nobody's task would be offered to
        # the next test's launch and refused when it holds it.
        released = disks.release(owner)
        network.release(owner)
    assert [d["id"] for d in released] == [held[0]["id"]] and released[0]["state"] in ("wiping", "free")

    disk = wait_free(disks, held[0]["id"], node)
    assert disk["owner"] is None
    assert not os.path.exists(os.path.join(held[0]["mount_point"], "secret")), "the wipe removed the file"
    assert os.path.ismount(held[0]["mount_point"])
    with pytest.raises(ApiError) as gone:
        network.request("GET", "/allocations", params={"owner": owner})
    assert gone.value.code == "NOT_ALLOCATED"
    client.close()
