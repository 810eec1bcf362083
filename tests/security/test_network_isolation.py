"""Network isolation per cluster, on the running platform through the public API (issue 15):
every tenant's members share the floating-IP pool (one Docker bridge here), yet

- a member reaches the other members of its cluster and its own job drivers, and they reach it;
- nothing of another cluster: another user's member is unreachable from this cluster's members and
  job drivers, and this cluster's members are unreachable from it (both directions);
- the platform (this host) reaches every member, but members cannot open connections to the
  platform's own addresses (a listener this test opens on the pool's gateway address);
- each member's network namespace carries Spindle's filter, installed by its executor.

Attempts go from inside the containers (``docker exec``) with short timeouts: a refused peer is a
dropped or rejected connection, never a page."""
import json
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest

from spindle_common.isolation import IN_CHAIN, OUT_CHAIN
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.security.test_container_hardening import container_of, retrying, settled
from tests.support.live_users import live_user
from tests.support.probes import PROBE, probe, reached, url

# Small clusters (static-web serves its first disk).
TWO = {"roles": {"server": {"count": 2, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}
ONE = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}
@pytest.fixture(scope="module")
def tenants(database_url, platform_env) -> Iterator[tuple[dict, dict, object, object]]:
    """User A's RUNNING 2-member cluster and user B's RUNNING 1-member cluster (with their clients)."""
    with live_user(database_url, "iso-a") as a, live_user(database_url, "iso-b") as b:
        launched = [(a, retrying(lambda: a.launch("static-web", "1.0", TWO))),
                    (b, retrying(lambda: b.launch("static-web", "1.0", ONE)))]
        try:
            running = []
            for user, cluster in launched:
                cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=600)
                assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
                running.append(cluster)
            yield running[0], running[1], a, b
        finally:
            for user, cluster in launched:
                retrying(lambda u=user, c=cluster: u.delete(c))
            for user, cluster in launched:
                final = settled(user, cluster, ("DESTROYED",), timeout=300)
                assert final["state"] == "DESTROYED"
                assert_nothing_left(platform_env, final)


def gateway_of(member: dict) -> str:
    """The host's address on the member's pool network."""
    network = docker.from_env().networks.get(container_of(member).attrs["HostConfig"]["NetworkMode"])
    return network.attrs["IPAM"]["Config"][0]["Gateway"]


def test_a_cluster_reaches_itself_and_nothing_of_another_tenant(tenants):
    mine, theirs, _, _ = tenants
    a1, a2 = mine["members"]
    (b1,) = theirs["members"]
    from_a1 = probe(container_of(a1), url(a2), url(b1))
    assert reached(from_a1) == {url(a2): True, url(b1): False}, from_a1
    from_a2 = probe(container_of(a2), url(a1), url(b1))
    assert reached(from_a2) == {url(a1): True, url(b1): False}, from_a2
    from_b1 = probe(container_of(b1), url(a1), url(a2))  # the other direction
    assert reached(from_b1) == {url(a1): False, url(a2): False}, from_b1


def test_the_platform_reaches_every_member(tenants):
    mine, theirs, _, _ = tenants
    for cluster in (mine, theirs):
        for member in cluster["members"]:
            page = httpx.get(url(member), timeout=10)
            assert page.status_code == 200 and f"of {cluster['id']}" in page.text


def test_members_cannot_open_connections_to_the_platform(tenants):
    """A listener on the pool's gateway (this host's address on the members' bridge): the host
    reaches it, a member does not."""
    mine, _, _, _ = tenants
    member = mine["members"][0]
    gateway = gateway_of(member)
    server = socket.create_server((gateway, 0))
    port = server.getsockname()[1]
    accepted: list[str] = []

    def serve() -> None:
        server.settimeout(30)
        try:
            while True:
                conn, peer = server.accept()
                accepted.append(peer[0])
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
                conn.close()
        except OSError:
            return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        target = f"http://{gateway}:{port}/"
        assert httpx.get(target, timeout=5).text == "ok"  # the listener works
        result = probe(container_of(member), target)
        assert reached(result) == {target: False}, result
        assert member["ip"] not in accepted
    finally:
        server.close()
        thread.join(5)


def test_each_member_carries_the_filter_with_its_peers_only(tenants):
    mine, theirs, _, _ = tenants
    peers = {m["ip"] for m in mine["members"]}
    for member in mine["members"]:
        platform = {gateway_of(member)}  # let in (health checks, the owner through the platform)
        pid = container_of(member).attrs["State"]["Pid"]
        rules = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "iptables", "-S"], capture_output=True,
                               text=True, check=True).stdout
        accepted = {line.split()[3].removesuffix("/32") for line in rules.splitlines()
                    if line.startswith(f"-A {IN_CHAIN} -s ") and line.endswith("-j ACCEPT")}
        assert accepted == peers | platform
        assert f"-A OUTPUT -j {OUT_CHAIN}" in rules
        assert theirs["members"][0]["ip"] not in rules


def test_job_drivers_reach_their_own_cluster_only(tenants, tmp_path: Path):
    """A job of A's cluster fetches A's member (a peer, let in once the driver's address is known)
    and B's member (refused)."""
    mine, theirs, a, _ = tenants
    own, other = url(mine["members"][0]), url(theirs["members"][0])
    main = tmp_path / "probe.py"
    main.write_text(PROBE.replace("sys.argv[1:]", json.dumps([own, other])).replace("timeout=3", "timeout=20"))
    job = retrying(lambda: a.submit(mine, main))
    deadline = time.monotonic() + 300
    while (job := a.job(mine, job["id"]))["state"] not in ("SUCCEEDED", "FAILED", "KILLED"):
        assert time.monotonic() < deadline, job
        time.sleep(1)
    assert job["state"] == "SUCCEEDED", (job["message"], job["stderr"])
    result = json.loads(job["stdout"].strip().splitlines()[-1])
    assert reached(result) == {own: True, other: False}, result
