"""Per-cluster batches of floating IPs on real PostgreSQL and Consul: every member's IP and DNS
name in one call, all or nothing (also when Consul fails part-way), idempotent on retry; many
owners released in one call; two batches racing for the last IPs."""
import socket
import time
import uuid
from collections import Counter
from contextlib import contextmanager

import dns.resolver
import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from spindle_common.clients import NetworkClient
from spindle_common.consul import ConsulClient
from spindle_common.errors import ApiError
from spindle_network.main import build_app
from tests.integration.network.conftest import ADMIN, SERVICE, TOKEN, USER, remove_test_pools
from tests.support.race import race


def pool(api, name, cidr):
    created = api.post("/pools", json={"name": name, "cidr": cidr}, headers=ADMIN)
    assert created.status_code == 201, created.text
    return created.json()


def held_ips(url: str) -> dict[str, str]:
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = dict(conn.execute(text("SELECT owner, host(address) FROM network.floating_ips "
                                      "WHERE owner IS NOT NULL")).all())
    engine.dispose()
    return rows


def consul_services(consul_url: str, service: str) -> dict[str, dict]:
    """The agent's services named ``service``, by id."""
    services = httpx.get(f"{consul_url}/v1/agent/services", timeout=10).json()
    return {sid: s for sid, s in services.items() if s["Service"] == service}


def members(cluster: str, n: int, start: int = 0) -> list[dict]:
    return [{"owner": f"{cluster}-m{i}", "dns_name": f"m{i}"} for i in range(start, start + n)]


@pytest.fixture
def cluster() -> str:
    return f"b{uuid.uuid4().hex[:10]}"


def test_batch_holds_every_member_with_its_name_and_a_retry_returns_the_same(api, fresh_database, consul_url, cluster):
    pool(api, "tbatch-main", "172.31.212.0/26")
    body = {"pool": "tbatch-main", "dns_service": cluster,
            "members": [*members(cluster, 2), {"owner": f"{cluster}-m2", "dns_name": "m2", "health_tcp_port": 8000},
                        {"owner": f"{cluster}-driver"}]}
    first = api.post("/allocations/batch", json=body, headers=SERVICE)
    assert first.status_code == 201, first.text
    leases = first.json()["leases"]
    assert [lease["owner"] for lease in leases] == [m["owner"] for m in body["members"]]
    assert len({lease["address"] for lease in leases}) == 4
    assert all(lease["address"].startswith("172.31.212.") and lease["docker_network"] == "spindle-tbatch-main"
               for lease in leases)
    assert [lease["dns_name"] for lease in leases] == [f"m{i}.{cluster}.service.spindle" for i in range(3)] + [None]
    assert held_ips(fresh_database) == {lease["owner"]: lease["address"] for lease in leases}
    registered = consul_services(consul_url, cluster)
    assert sorted(registered) == [f"member-{cluster}-m{i}" for i in range(3)]
    assert registered[f"member-{cluster}-m0"]["Address"] == leases[0]["address"]
    assert "m2" in registered[f"member-{cluster}-m2"]["Tags"]
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port = ["127.0.0.1"], 8600
    assert [r.to_text() for r in resolver.resolve(leases[1]["dns_name"], "A")] == [leases[1]["address"]]

    again = api.post("/allocations/batch", json=body, headers=SERVICE)
    assert again.status_code == 200 and again.json() == first.json(), "a retry returns the same leases"
    grown = api.post("/allocations/batch", json={**body, "members": body["members"] + members(cluster, 1, start=5)},
                     headers=SERVICE)
    assert grown.status_code == 201 and grown.json()["leases"][:4] == leases
    assert api.get("/pools/tbatch-main", headers=ADMIN).json()["floating_used"] == 5

    owners = [lease["owner"] for lease in grown.json()["leases"]] + ["never-held-anything"]
    released = api.post("/allocations/release", json={"owners": owners}, headers=SERVICE)
    assert released.status_code == 200, released.text
    assert sorted(ip["address"] for ip in released.json()) == sorted(lease["address"]
                                                                     for lease in grown.json()["leases"])
    assert all(ip["owner"] is None and ip["dns"] is None for ip in released.json())
    assert held_ips(fresh_database) == {} and consul_services(consul_url, cluster) == {}
    again = api.post("/allocations/release", json={"owners": owners}, headers=SERVICE)
    assert again.status_code == 200 and again.json() == [], "releasing again changes nothing"
    assert api.post("/allocations/release", json={"owner": owners[0]}, headers=SERVICE).status_code == 404, \
        "the single-owner form is unchanged"


def test_a_batch_larger_than_the_free_ips_holds_nothing(api, fresh_database, consul_url, cluster):
    pool(api, "tbatch-small", "172.31.212.64/29")  # floating .68–.70: three addresses
    assert api.post("/allocations", json={"owner": "someone", "pool": "tbatch-small"},
                    headers=SERVICE).status_code == 201
    response = api.post("/allocations/batch", headers=SERVICE,
                        json={"pool": "tbatch-small", "dns_service": cluster, "members": members(cluster, 3)})
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "POOL_EXHAUSTED"
    assert response.json()["error"]["details"] == {"pool": "tbatch-small", "free": 2, "requested": 3, "members": 3}
    assert list(held_ips(fresh_database)) == ["someone"]
    assert consul_services(consul_url, cluster) == {}


class FailingConsul(ConsulClient):
    """The real Consul agent, except that registration number ``fail_at`` (1-based) fails as if
    the agent had gone away."""

    def __init__(self, url: str, fail_at: int):
        super().__init__(url)
        self.fail_at, self.calls = fail_at, 0

    def register_service(self, *args, **kwargs) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise httpx.ConnectError("injected: Consul agent unreachable")
        super().register_service(*args, **kwargs)


def test_a_consul_failure_part_way_leaves_no_ip_and_no_name(settings, fresh_database, consul_url, cluster):
    app = build_app(settings)
    api = TestClient(app)
    try:
        pool(api, "tbatch-flaky", "172.31.212.128/26")
        # One member already holds its IP and name from an earlier call: it keeps both.
        earlier = api.post("/allocations/batch", headers=SERVICE,
                           json={"pool": "tbatch-flaky", "dns_service": cluster, "members": members(cluster, 1)})
        assert earlier.status_code == 201
        app.state.consul = FailingConsul(consul_url, fail_at=3)
        body = {"pool": "tbatch-flaky", "dns_service": cluster, "members": members(cluster, 4)}
        failed = api.post("/allocations/batch", json=body, headers=SERVICE)
        assert failed.status_code == 503, failed.text
        error = failed.json()["error"]
        assert error["code"] == "DNS_REGISTRATION_FAILED"
        assert error["details"] == {"owner": f"{cluster}-m2", "dns_name": f"m2.{cluster}.service.spindle",
                                    "not_deregistered": []}
        assert held_ips(fresh_database) == {f"{cluster}-m0": earlier.json()["leases"][0]["address"]}
        assert sorted(consul_services(consul_url, cluster)) == [f"member-{cluster}-m0"], \
            "m1 was registered by the failed call and deregistered again; m0's name stays"
        assert api.get("/pools/tbatch-flaky", headers=ADMIN).json()["floating_used"] == 1

        app.state.consul = ConsulClient(consul_url)  # Consul is back: the same batch goes through
        done = api.post("/allocations/batch", json=body, headers=SERVICE)
        assert done.status_code == 201 and done.json()["leases"][0] == earlier.json()["leases"][0]
        assert len(consul_services(consul_url, cluster)) == 4
        api.post("/allocations/release", json={"owners": [m["owner"] for m in body["members"]]}, headers=SERVICE)
        assert consul_services(consul_url, cluster) == {} and held_ips(fresh_database) == {}
    finally:
        remove_test_pools(api)


def test_bad_batches_change_nothing(api, fresh_database, cluster):
    pool(api, "tbatch-bad", "172.31.212.192/27")
    cases = [
        ({"pool": "nope", "members": members(cluster, 1)}, SERVICE, 404, "POOL_NOT_FOUND"),
        ({"pool": "tbatch-bad", "members": members(cluster, 1) * 2}, SERVICE, 422, "VALIDATION_FAILED"),
        ({"pool": "tbatch-bad", "members": []}, SERVICE, 422, "VALIDATION_FAILED"),
        ({"pool": "tbatch-bad", "members": [{"owner": "x", "dns_name": "Not A Name"}]},
         SERVICE, 422, "VALIDATION_FAILED"),
        ({"pool": "tbatch-bad", "dns_service": "UPPER", "members": members(cluster, 1)},
         SERVICE, 422, "VALIDATION_FAILED"),
        ({"pool": "tbatch-bad", "members": members(cluster, 1)}, USER, 403, "FORBIDDEN"),
    ]
    for body, headers, status, code in cases:
        response = api.post("/allocations/batch", json=body, headers=headers)
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    for body in ({"owners": []}, {"owner": "a", "owners": ["a"]}, {}):
        response = api.post("/allocations/release", json=body, headers=SERVICE)
        assert (response.status_code, response.json()["error"]["code"]) == (422, "VALIDATION_FAILED"), body
    assert held_ips(fresh_database) == {}


def test_two_batches_racing_for_the_last_ips_one_wins_wholly(live_url, fresh_database, consul_url):
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        pool(admin, "tbatch-race", "172.31.213.0/27")  # 15 floating IPs
        for round_ in range(10):
            clusters = [f"r{round_}x{uuid.uuid4().hex[:6]}" for _ in range(2)]
            responses = race(live_url, 2, lambda client, i, clusters=clusters: client.post(
                "/allocations/batch", headers=SERVICE,
                json={"pool": "tbatch-race", "dns_service": clusters[i], "members": members(clusters[i], 10)}))
            statuses = sorted(r.status_code for r in responses)
            assert statuses == [201, 409], (round_, [r.text for r in responses])
            winner = next(i for i, r in enumerate(responses) if r.status_code == 201)
            loser = clusters[1 - winner]
            assert responses[1 - winner].json()["error"]["code"] == "POOL_EXHAUSTED"
            held = held_ips(fresh_database)
            assert Counter(owner.rsplit("-", 1)[0] for owner in held) == {clusters[winner]: 10}
            assert consul_services(consul_url, loser) == {} and len(consul_services(consul_url, clusters[winner])) == 10
            released = admin.post("/allocations/release", headers=SERVICE, json={"owners": list(held)})
            assert released.status_code == 200 and len(released.json()) == 10
            assert consul_services(consul_url, clusters[winner]) == {}


def test_network_client_batch_methods(live_url, fresh_database, consul_url, cluster):
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        pool(admin, "tbatch-client", "172.31.213.32/27")
    with NetworkClient(live_url, TOKEN, "orchestrator") as network:
        leases = network.allocate_batch("tbatch-client", members(cluster, 3), dns_service=cluster)
        assert [lease["dns_name"] for lease in leases] == [f"m{i}.{cluster}.service.spindle" for i in range(3)]
        assert network.allocate_batch("tbatch-client", members(cluster, 3), dns_service=cluster) == leases
        plain = network.allocate_batch("tbatch-client", [{"owner": f"{cluster}-job"}])
        assert plain[0]["dns_name"] is None
        with pytest.raises(ApiError) as exc:
            network.allocate_batch("nope", members(cluster, 1))
        assert (exc.value.status, exc.value.code) == (404, "POOL_NOT_FOUND")
        assert len(network.release_many([lease["owner"] for lease in leases + plain])) == 4
        assert network.release_many([]) == []
    assert held_ips(fresh_database) == {} and consul_services(consul_url, cluster) == {}


def test_healthy_members_names_pass_at_once_and_consul_keeps_checking(api, fresh_database, consul_url, cluster):
    """Registered while nothing listens, a member's TCP check is critical; asked again with
    ``healthy`` (its executor just found it healthy) it is passing at once, no check run awaited."""
    pool(api, "tbatch-healthy", "172.31.212.128/28")
    body = {"pool": "tbatch-healthy", "dns_service": cluster,
            "members": [{"owner": f"{cluster}-m0", "dns_name": "m0", "health_tcp_port": 8000}]}
    assert api.post("/allocations/batch", json=body, headers=SERVICE).status_code == 201

    def status() -> list[str]:
        entries = httpx.get(f"{consul_url}/v1/health/service/{cluster}", timeout=10).json()
        return [c["Status"] for e in entries for c in e["Checks"] if c["ServiceID"]]

    assert status() == ["critical"]
    again = api.post("/allocations/batch", json={**body, "healthy": True}, headers=SERVICE)
    assert again.status_code == 200, again.text
    assert status() == ["passing"]
    [service] = consul_services(consul_url, cluster).values()
    assert service["Address"] == again.json()["leases"][0]["address"]
    assert api.post("/allocations/release", json={"owners": [f"{cluster}-m0"]}, headers=SERVICE).status_code == 200
    assert consul_services(consul_url, cluster) == {}


@contextmanager
def unanswered_port():
    """A loopback port whose connection attempts hang: its listener's accept queue is full, so the
    kernel drops further SYNs (a member's address before its container answers, as a probe sees it)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        fillers = [socket.socket() for _ in range(2)]
        try:
            for filler in fillers:
                filler.setblocking(False)
                filler.connect_ex(("127.0.0.1", port))
            time.sleep(0.2)
            yield port
        finally:
            for filler in fillers:
                filler.close()


def test_a_name_registered_passing_is_not_turned_critical_by_an_earlier_probe_in_flight(consul_url, cluster):
    """CI run 27's NXDOMAIN: registered while its member did not answer yet, a TCP check's dial hangs
    for its 2 s timeout; registered again as passing (the member healthy) meanwhile, the name must
    stay passing — the earlier dial's result belongs to a check that no longer exists."""
    with unanswered_port() as hanging, socket.socket() as answering, ConsulClient(consul_url) as consul:
        answering.bind(("127.0.0.1", 0))
        answering.listen(16)
        service_id = f"member-{cluster}-m0"
        consul.register_service(cluster, service_id, "127.0.0.1", hanging,
                                check=consul.tcp_check("127.0.0.1", hanging, interval="1s"))
        try:
            time.sleep(1.2)  # the first run starts within one interval: its dial is now waiting
            healthy = {**consul.tcp_check("127.0.0.1", answering.getsockname()[1], interval="1s"),
                       "Status": "passing"}
            consul.register_service(cluster, service_id, "127.0.0.1", answering.getsockname()[1], check=healthy)
            seen = set()
            deadline = time.monotonic() + 3.0  # past the earlier dial's timeout
            while time.monotonic() < deadline:
                [entry] = consul.service_health(cluster)
                seen |= {(c["CheckID"], c["Status"]) for c in entry["Checks"] if c["ServiceID"]}
                time.sleep(0.05)
            assert {status for _, status in seen} == {"passing"}, seen
            assert len({check_id for check_id, _ in seen}) == 1, seen  # the earlier check was replaced
        finally:
            consul.deregister_service(service_id)
