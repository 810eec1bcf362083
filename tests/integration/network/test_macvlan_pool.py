"""A macvlan pool on a veth parent (this kernel has no dummy/ipvlan links): members on it get
their floating IPs and reach each other."""
import subprocess
import uuid

import docker
import pytest

from tests.integration.network.conftest import ADMIN, SERVICE
from tests.integration.network.test_ip_move_and_dns import SERVE, fetch_who


@pytest.fixture
def veth():
    name = f"spdl{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p"], check=True)
    subprocess.run(["ip", "link", "set", name, "up"], check=True)
    subprocess.run(["ip", "link", "set", f"{name}p", "up"], check=True)
    yield name
    subprocess.run(["ip", "link", "del", name], check=False)


def test_macvlan_pool_carries_floating_ips(api, veth, platform_env):
    created = api.post("/pools", headers=ADMIN, json={"name": "mv", "cidr": "172.31.209.0/24", "driver": "macvlan",
                                                      "parent": veth})
    assert created.status_code == 201, created.text
    network = docker.from_env().networks.get(created.json()["docker_network"])
    assert network.attrs["Driver"] == "macvlan" and network.attrs["Options"]["parent"] == veth
    client = docker.from_env()
    boxes = [client.containers.run(platform_env["SPINDLE_BASE_IMAGE"], ["sh", "-c", SERVE], detach=True,
                                   hostname=f"mv{i}", labels={"io.spindle.owned": "true"},
                                   name=f"spindle-test-mv-{uuid.uuid4().hex[:6]}") for i in range(2)]
    try:
        ips = []
        for i, box in enumerate(boxes):
            ip = api.post("/allocations", json={"owner": f"mv-{i}", "pool": "mv"}, headers=SERVICE).json()["address"]
            assert api.post(f"/ips/{ip}/attach", json={"container": box.name}, headers=SERVICE).status_code == 200
            ips.append(ip)
        assert fetch_who(boxes[0], ips[1]) == "mv1" and fetch_who(boxes[1], ips[0]) == "mv0"
    finally:
        for box in boxes:
            box.remove(force=True)
        client.close()
