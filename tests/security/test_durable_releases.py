"""Nothing leaked, durably (issue 15), on the running platform:

- a launch whose floating IPs run out part-way fails with a clear error and leaves no IP held and
  no DNS name registered for its cluster;
- a scheduler restart keeps every member's floating IP and DNS name (the scheduler never touches
  them: the orchestrator owns them), and its disks;
- a cluster deleted while disk-service is down, then a scheduler restart while it is still down,
  ends with the member's disks wiped and free once disk-service is back: the release the ended task
  owed was recorded with its end and is retried by the next scheduler process.

The last test stops disk-service (and restarts the scheduler) for a few seconds: other tests'
launches wait meanwhile. Both are always started again in a ``finally``."""
import time
import uuid

import dns.resolver
import httpx
import pytest

from spindle_client.client import SpindleError
from spindle_common.clients import DiskClient, NetworkClient
from spindle_common.consul import ConsulClient
from spindle_common.errors import ApiError
from tests.integration.platform.cluster_checks import RESOLVER, assert_nothing_left
from tests.security.test_container_hardening import retrying, settled
from tests.support.internal import internal_headers
from tests.support.live_users import live_user
from tests.support.nodes import deploy_lib, sh

SCHEDULER, DISKS, NETWORK = "http://127.0.0.1:8082", "http://127.0.0.1:8083", "http://127.0.0.1:8084"
ONE_SERVER = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}


@pytest.fixture(scope="module")
def user(database_url):
    with live_user(database_url, "rel") as client:
        yield client


@pytest.fixture(scope="module")
def admin_headers(platform_env) -> dict[str, str]:
    return internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "durable-releases-test", "admin")


@pytest.fixture(scope="module")
def disks(platform_env):
    with DiskClient(DISKS, platform_env["SPINDLE_INTERNAL_TOKEN"], actor="durable-releases-test",
                    role="admin") as client:
        yield client


@pytest.fixture(scope="module")
def network(platform_env):
    with NetworkClient(NETWORK, platform_env["SPINDLE_INTERNAL_TOKEN"], actor="durable-releases-test",
                       role="admin") as client:
        yield client


def wait_until(what: str, check, timeout: float, every: float = 0.5):
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = check()
        except (httpx.HTTPError, ApiError):  # a service restarting
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:.0f} s: {what}")
        time.sleep(every)


def healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def resolves_to(name: str) -> str | None:
    try:
        return RESOLVER.resolve(name, "A")[0].to_text()
    except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
        return None


def held_by_cluster(network: NetworkClient, cluster_id: str) -> list[dict]:
    return [h for h in network.request("GET", "/allocations/held") if h["owner"].startswith(f"{cluster_id}-")]


def test_a_launch_whose_ips_run_out_part_way_holds_nothing(user, network, platform_env):
    """The default pool is filled (under a test owner) until two IPs are left; a three-member launch
    fails clearly, and no IP nor DNS name of its cluster stays held. The pool is full for a few seconds."""
    pool = next(p for p in network.request("GET", "/pools") if p["name"] == "default")
    free = pool["floating_total"] - pool["floating_used"]
    filler = [f"fill-{uuid.uuid4().hex[:8]}-{i}" for i in range(max(free - 2, 0))]
    cluster = None
    try:
        if filler:
            network.allocate_batch("default", [{"owner": o} for o in filler])
        try:
            cluster = user.launch("static-web", "1.0", {"roles": {"server": {"count": 3, "cpus": 0.1}}})
        except SpindleError as exc:  # refused up front (no cluster): a clear 4xx, nothing held
            assert 400 <= exc.status < 500 and exc.code, exc
        else:
            cluster = settled(user, cluster, ("FAILED", "RUNNING"), timeout=120)
            assert cluster["state"] == "FAILED", "three members cannot get two IPs"
            assert cluster["reason_code"] == "IP_UNAVAILABLE", cluster
            assert "free floating IPs" in cluster["reason"] and "needs 3" in cluster["reason"], cluster["reason"]
    finally:
        network.release_many(filler)
    if cluster is not None:
        assert held_by_cluster(network, cluster["id"]) == [], "no IP of the failed launch stays held"
        consul = ConsulClient(platform_env["SPINDLE_CONSUL_URL"])
        try:
            assert consul.service_health(cluster["id"]) == [], "no DNS name of the failed launch is registered"
        finally:
            consul.close()
        retrying(lambda: user.delete(cluster))
        final = settled(user, cluster, ("DESTROYED",), timeout=120)
        assert_nothing_left(platform_env, final)


@pytest.fixture(scope="module")
def running(user, platform_env):
    """One RUNNING static-web cluster of one server with a dedicated disk (deleted at the end, if a
    test did not)."""
    cluster = retrying(lambda: user.launch("static-web", "1.0", ONE_SERVER))
    try:
        cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=300)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        yield cluster
    finally:
        current = retrying(lambda: user.cluster(cluster))
        if current["state"] not in ("DESTROYED",):
            retrying(lambda: user.delete(cluster))
            settled(user, cluster, ("DESTROYED",), timeout=300)


def test_a_members_ip_dns_name_and_disks_stay_across_a_scheduler_restart(running, user, network, disks,
                                                                        admin_headers):
    member = running["members"][0]
    assert member["ip"] and member["dns_name"] and member["disks"]
    wait_until(f"{member['dns_name']} resolves", lambda: resolves_to(member["dns_name"]) == member["ip"], 30)
    held_disks = sorted(d["id"] for d in disks.disks(owner=member["member_id"]))
    assert held_disks

    sh("deploy/restart", "scheduler")
    # The new process re-registered and reconciled: the member's task is still running.
    wait_until("the scheduler reports the member running", lambda: [
        t["state"] for t in httpx.get(f"{SCHEDULER}/clusters/{running['id']}/tasks", headers=admin_headers,
                                      timeout=10).json()] == ["TASK_RUNNING"], 60)
    for _ in range(6):  # over a few seconds after the re-registration, nothing was taken from it
        assert [h["address"] for h in network.request("GET", "/allocations", params={"owner": member["member_id"]})] \
            == [member["ip"]]
        assert network.request("GET", "/allocations", params={"owner": member["member_id"]})[0]["dns"] \
            == member["dns_name"]
        assert resolves_to(member["dns_name"]) == member["ip"]
        assert sorted(d["id"] for d in disks.disks(owner=member["member_id"])) == held_disks
        time.sleep(0.5)
    after = retrying(lambda: user.cluster(running))
    assert after["state"] == "RUNNING" and after["members"][0]["ip"] == member["ip"]
    assert after["members"][0]["dns_name"] == member["dns_name"]


def test_a_scheduler_restart_while_disk_service_is_down_ends_with_the_disks_wiped(running, user, disks,
                                                                                  admin_headers, platform_env):
    member = running["members"][0]["member_id"]
    held = [d["id"] for d in disks.disks(owner=member)]
    assert held and all(d["state"] == "allocated" for d in disks.disks(owner=member))
    try:
        deploy_lib("stop_daemon disk-service")
        retrying(lambda: user.delete(running))
        # The member's task ends; its release fails (disk-service is down) and stays owed, durably.
        owed = wait_until("the ended task owes its release", lambda: [
            r for r in httpx.get(f"{SCHEDULER}/releases", headers=admin_headers, timeout=10).json()["owed"]
            if r["member_id"] == member and r["attempts"] >= 1], 60)
        assert "unreachable" in owed[0]["error"] or "503" in owed[0]["error"], owed

        deploy_lib("stop_daemon scheduler; start_service scheduler")
        wait_until("the scheduler is back", lambda: healthy(SCHEDULER), 60)
        after_restart = wait_until("the new scheduler still owes it", lambda: [
            r for r in httpx.get(f"{SCHEDULER}/releases", headers=admin_headers, timeout=10).json()["owed"]
            if r["member_id"] == member], 30)
        assert after_restart[0]["task_id"] == owed[0]["task_id"]
    finally:
        deploy_lib("start_service disk-service; start_service scheduler")
        wait_until("disk-service is back", lambda: healthy(DISKS), 60)
        wait_until("the scheduler is back", lambda: healthy(SCHEDULER), 60)

    # Once disk-service answers, the owed release goes through: allocated → wiping → free.
    wait_until("the member's disks are wiped and free", lambda: not disks.disks(owner=member) and all(
        disks.request("GET", f"/disks/{i}")["state"] == "free" for i in held), 120)
    for disk_id in held:
        history = [(t["from_state"], t["to_state"]) for t in disks.request("GET", f"/disks/{disk_id}/transitions")]
        assert history[-2:] == [("allocated", "wiping"), ("wiping", "free")], history[-4:]
    wait_until("nothing owed any more", lambda: not [
        r for r in httpx.get(f"{SCHEDULER}/releases", headers=admin_headers, timeout=10).json()["owed"]
        if r["member_id"] == member], 30)
    final = settled(user, running, ("DESTROYED",), timeout=120)
    assert_nothing_left(platform_env, final)


def test_the_sweeps_free_holds_left_for_a_destroyed_cluster(running, user, disks, network, admin_headers,
                                                            platform_env):
    """A disk and an IP with a DNS name held again under the name of a member whose cluster is
    DESTROYED (as a lost release would leave them) are found by the sweeps once past their grace
    period, and freed: the disk wiped, the IP and its name gone."""
    cluster = retrying(lambda: user.cluster(running))
    if cluster["state"] != "DESTROYED":
        retrying(lambda: user.delete(cluster))
        cluster = settled(user, cluster, ("DESTROYED",), timeout=300)
    member = cluster["members"][0]
    sweeps_before = httpx.get("http://127.0.0.1:8081/internal/sweeps", headers=admin_headers, timeout=10).json()
    releases_before = httpx.get(f"{SCHEDULER}/releases", headers=admin_headers, timeout=10).json()
    leaked_disks = wait_until("a free disk to leak", lambda: disks.allocate(member["node"], "hdd", 1,
                                                                             member["member_id"]), 120, every=2)
    network.allocate(member["member_id"], "default", dns_service=cluster["id"], dns_name="server-1")
    try:
        def swept() -> bool:
            """Sweep now (as the periodic sweeps do); True once the disk is wiped and free, the IP free."""
            httpx.post(f"{SCHEDULER}/sweep", headers=admin_headers, timeout=60).raise_for_status()
            httpx.post("http://127.0.0.1:8081/internal/sweeps", headers=admin_headers, timeout=60).raise_for_status()
            return not disks.disks(owner=member["member_id"]) and not held_by_cluster(network, cluster["id"]) and all(
                disks.request("GET", f"/disks/{d['id']}")["state"] == "free" for d in leaked_disks)

        # Within their grace periods (scheduler 30 s, orchestrator 60 s) the holds are not judged yet.
        assert not swept() and disks.disks(owner=member["member_id"]) and held_by_cluster(network, cluster["id"])
        wait_until("the sweeps free the leaked disk and IP", swept, 240, every=5)
        assert held_by_cluster(network, cluster["id"]) == []
        consul = ConsulClient(platform_env["SPINDLE_CONSUL_URL"])
        try:
            assert consul.service_health(cluster["id"]) == [], "the leaked DNS name is gone with its IP"
        finally:
            consul.close()
        sweeps = httpx.get("http://127.0.0.1:8081/internal/sweeps", headers=admin_headers, timeout=10).json()
        releases = httpx.get(f"{SCHEDULER}/releases", headers=admin_headers, timeout=10).json()
        assert sweeps["freed_total"] > sweeps_before["freed_total"] or sweeps["runs"] < sweeps_before["runs"]
        assert (releases["swept_total"] > releases_before["swept_total"]
                or releases["sweeps"] < releases_before["sweeps"])
    finally:
        network.release_many([member["member_id"]])
        disks.release_many([member["member_id"]])
