"""Floating IPs on real containers: attached, reachable from each other, moved to another
container in place; and a member's DNS name resolved through Consul."""
import time
import uuid

import dns.resolver
import docker
import pytest

from tests.integration.network.conftest import ADMIN, SERVICE

SERVE = "cd /tmp && echo $HOSTNAME > who && exec python3 -m http.server 8000"
FETCH = ("python3 -c \"import urllib.request,sys; "
         "print(urllib.request.urlopen('http://%s:8000/who', timeout=5).read().decode().strip())\"")


@pytest.fixture
def containers(platform_env):
    client = docker.from_env()
    made = [client.containers.run(platform_env["SPINDLE_BASE_IMAGE"], ["sh", "-c", SERVE], detach=True,
                                  name=f"spindle-test-net-{uuid.uuid4().hex[:6]}", hostname=f"box{i}",
                                  labels={"io.spindle.owned": "true"})
            for i in range(3)]
    yield made
    for container in made:
        container.remove(force=True)
    client.close()


def fetch_who(container, ip: str) -> str:
    deadline = time.monotonic() + 20
    while True:
        result = container.exec_run(["sh", "-c", FETCH % ip])
        if result.exit_code == 0 or time.monotonic() > deadline:
            return result.output.decode().strip()
        time.sleep(0.2)


def test_ips_reach_each_other_and_move_between_containers(api, containers):
    assert api.post("/pools", json={"name": "movers", "cidr": "172.31.207.0/24"}, headers=ADMIN).status_code == 201
    a, b, c = containers
    ip_a = api.post("/allocations", json={"owner": "member-a", "pool": "movers"}, headers=SERVICE).json()["address"]
    ip_b = api.post("/allocations", json={"owner": "member-b", "pool": "movers"}, headers=SERVICE).json()["address"]
    for ip, box in ((ip_a, a), (ip_b, b)):
        attached = api.post(f"/ips/{ip}/attach", json={"container": box.name}, headers=SERVICE)
        assert attached.status_code == 200 and attached.json()["container"] == box.name
    assert fetch_who(a, ip_b) == "box1" and fetch_who(b, ip_a) == "box0"

    moved = api.post(f"/ips/{ip_a}/move", json={"container": c.name}, headers=SERVICE)
    assert moved.status_code == 200 and moved.json()["container"] == c.name and moved.json()["owner"] == "member-a"
    assert fetch_who(b, ip_a) == "box2", "the IP now answers from the container it moved to"
    a.reload()
    assert "spindle-movers" not in a.attrs["NetworkSettings"]["Networks"]

    taken = api.post(f"/ips/{ip_b}/move", json={"container": "no-such-container"}, headers=SERVICE)
    assert taken.status_code == 404 and taken.json()["error"]["code"] == "CONTAINER_NOT_FOUND"
    assert fetch_who(c, ip_b) == "box1", "a failed move leaves the IP where it was"

    released = api.post("/allocations/release", json={"owner": "member-a"}, headers=SERVICE)
    assert released.status_code == 200
    c.reload()
    assert "spindle-movers" not in c.attrs["NetworkSettings"]["Networks"], "release detaches the IP"


def test_member_dns_name_resolves_through_consul(api):
    assert api.post("/pools", json={"name": "named", "cidr": "172.31.208.0/24"}, headers=ADMIN).status_code == 201
    cluster = f"c{uuid.uuid4().hex[:8]}"
    lease = api.post("/allocations", headers=SERVICE, json={"owner": f"{cluster}-worker-2", "pool": "named",
                                                            "dns_service": cluster, "dns_name": "worker-2"}).json()
    name = f"worker-2.{cluster}.service.spindle"
    assert lease["dns"] == name
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port = ["127.0.0.1"], 8600
    assert [r.to_text() for r in resolver.resolve(name, "A")] == [lease["address"]]
    api.post("/allocations/release", headers=SERVICE, json={"owner": f"{cluster}-worker-2"})
    with pytest.raises(dns.resolver.NXDOMAIN):
        resolver.resolve(name, "A")
