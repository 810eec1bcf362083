"""The executor's containers on the real Docker Engine: limits, disks at /data/N, floating IP,
config files, health checks, failure reasons, and no container left behind."""
import json
import subprocess
import uuid

import docker
import httpx
import pytest

from spindle_executor.container import LaunchFailed, create_and_start, remove, wait_healthy
from spindle_executor.task_spec import parse_task_spec

SUBNET, GATEWAY = "172.31.210.0/24", "172.31.210.1"


@pytest.fixture(scope="module")
def client():
    client = docker.from_env()
    yield client
    client.close()


@pytest.fixture(scope="module")
def network(client):
    name = f"spindle-test-executor-{uuid.uuid4().hex[:6]}"
    ipam = docker.types.IPAMConfig(pool_configs=[docker.types.IPAMPool(subnet=SUBNET, gateway=GATEWAY,
                                                                      iprange="172.31.210.0/25")])
    net = client.networks.create(name, driver="bridge", ipam=ipam, labels={"io.spindle.owned": "true"})
    yield name
    net.remove()


@pytest.fixture
def disk(tmp_path):
    """A real mount point standing in for a dedicated disk (tmpfs; the disk tests use loop devices)."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "spindle-test", str(tmp_path)], check=True)
    yield str(tmp_path)
    subprocess.run(["umount", str(tmp_path)], check=True)


def spec_for(image: str, network: str | None, ip: str | None, disks: list[str], member_id: str | None = None,
             **extra):
    task_id = f"test-{uuid.uuid4().hex[:8]}"
    data = {"cluster_id": "ctest", "member_id": member_id or task_id, "image": image, "cpus": 0.5, "mem_mb": 64,
            "disks": [{"host_path": d} for d in disks], "network": network, "ip": ip, **extra}
    return parse_task_spec(task_id, json.dumps(data))


def test_member_container_gets_limits_disk_ip_and_files(client, network, disk, platform_env):
    spec = spec_for(platform_env["SPINDLE_BASE_IMAGE"], network, "172.31.210.150", [disk], cpuset="0",
                    command=["sh", "-c",
                             "echo from-member > /data/1/hello && cd /data/1 && exec python3 -m http.server 8000"],
                    files={"/etc/spindle/member.conf": "role=worker\n"},
                    health={"tcp_port": 8000, "timeout_seconds": 60})
    try:
        container = create_and_start(client, spec)
        wait_healthy(container, spec.health, spec.ip)
        host_config = container.attrs["HostConfig"]
        assert host_config["NanoCpus"] == 500_000_000 and host_config["Memory"] == 64 * 2**20
        assert host_config["CpusetCpus"] == "0"
        assert container.attrs["NetworkSettings"]["Networks"][network]["IPAddress"] == "172.31.210.150"
        # The floating IP answers from the host, and the file it served was written on the dedicated disk.
        assert httpx.get("http://172.31.210.150:8000/hello", timeout=5).text == "from-member\n"
        assert open(f"{disk}/hello").read() == "from-member\n"
        assert container.exec_run(["cat", "/etc/spindle/member.conf"]).output == b"role=worker\n"
        assert container.labels["io.spindle.task-id"] == spec.task_id
    finally:
        assert remove(client, spec.task_id) == 1
    assert client.containers.list(all=True, filters={"label": f"io.spindle.task-id={spec.task_id}"}) == []


def test_missing_image_fails_with_reason(client, network):
    spec = spec_for("spindle/no-such-image:1", network, "172.31.210.151", [])
    with pytest.raises(LaunchFailed, match="image spindle/no-such-image:1 is not on this node"):
        create_and_start(client, spec)


def test_unmounted_disk_fails_with_reason(client, tmp_path, platform_env):
    spec = spec_for(platform_env["SPINDLE_BASE_IMAGE"], None, None, [str(tmp_path)])
    with pytest.raises(LaunchFailed, match="is not mounted on this node"):
        create_and_start(client, spec)


def test_taken_ip_fails_and_leaves_no_container(client, network, platform_env):
    image = platform_env["SPINDLE_BASE_IMAGE"]
    first = spec_for(image, network, "172.31.210.152", [], command=["sleep", "60"])
    second = spec_for(image, network, "172.31.210.152", [], command=["sleep", "60"])
    try:
        create_and_start(client, first)
        with pytest.raises(LaunchFailed, match="docker refused the container"):
            create_and_start(client, second)
        assert client.containers.list(all=True, filters={"label": f"io.spindle.task-id={second.task_id}"}) == []
    finally:
        remove(client, first.task_id)


def test_a_member_s_stopped_earlier_container_gives_its_name_to_the_new_one_a_running_one_does_not(
        client, platform_env):
    """A node that died with its containers comes back with them stopped; a replacement of one of its
    members placed there takes the name (the stopped one is removed), a running one keeps it."""
    image = platform_env["SPINDLE_BASE_IMAGE"]
    earlier = spec_for(image, None, None, [], command=["sleep", "60"])
    again = spec_for(image, None, None, [], member_id=earlier.member_id, command=["sleep", "60"])
    try:
        running = create_and_start(client, earlier)
        with pytest.raises(LaunchFailed, match="is already in use"):
            create_and_start(client, again)
        running.reload()
        assert running.status == "running", "a running incarnation is left alone"

        running.kill()
        replacement = create_and_start(client, again)
        assert client.containers.list(all=True, filters={"label": f"io.spindle.task-id={earlier.task_id}"}) == []
        replacement.reload()
        assert replacement.name == earlier.container_name == f"spindle-{earlier.member_id}"
        assert (replacement.status, replacement.labels["io.spindle.task-id"]) == ("running", again.task_id)
    finally:
        remove(client, again.task_id)
        remove(client, earlier.task_id)


def test_failing_health_check_reports_exit_code_and_logs(client, platform_env):
    spec = spec_for(platform_env["SPINDLE_BASE_IMAGE"], None, None, [],
                    command=["sh", "-c", "echo cannot-start >&2; exit 3"], health={"command": ["true"]})
    try:
        container = create_and_start(client, spec)
        with pytest.raises(LaunchFailed, match="exited with code 3: cannot-start"):
            wait_healthy(container, spec.health, None)
    finally:
        remove(client, spec.task_id)
