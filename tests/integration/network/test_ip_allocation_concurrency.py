"""Exclusive floating IPs under contention, real PostgreSQL over real HTTP: 50 parallel requests
(each its own connection) for the last 10 free IPs — exactly 10 win, no IP twice; 6 rounds."""
from collections import Counter

import httpx

from tests.integration.network.conftest import ADMIN, SERVICE
from tests.support.race import race

ROUNDS = 6
CLIENTS = 50


def race_for_ips(url: str, pool: str, round_: int) -> list[httpx.Response]:
    return race(url, CLIENTS, lambda client, i: client.post(
        "/allocations", headers=SERVICE, json={"owner": f"r{round_}-member-{i}", "pool": pool}))


def test_fifty_requests_for_the_last_ten_ips(live_url):
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        # A /27 with its upper half floating: .16–.30 usable = 15 addresses.
        created = admin.post("/pools", headers=ADMIN, json={"name": "race", "cidr": "172.31.206.0/27"})
        assert created.status_code == 201, created.text
        assert created.json()["floating_total"] == 15
        for round_ in range(ROUNDS):
            early = [f"r{round_}-early-{i}" for i in range(5)]
            for owner in early:  # leave exactly 10 free
                assert admin.post("/allocations", headers=SERVICE,
                                  json={"owner": owner, "pool": "race"}).status_code == 201

            responses = race_for_ips(live_url, "race", round_)
            statuses = Counter(r.status_code for r in responses)
            assert statuses == {201: 10, 409: 40}, (round_, statuses)
            assert all(r.json()["error"]["code"] == "POOL_EXHAUSTED" for r in responses if r.status_code == 409)
            won = [r.json()["address"] for r in responses if r.status_code == 201]
            assert len(set(won)) == 10
            assert admin.get("/pools/race", headers=ADMIN).json()["floating_used"] == 15

            for owner in early + [r.json()["owner"] for r in responses if r.status_code == 201]:
                assert admin.post("/allocations/release", headers=SERVICE, json={"owner": owner}).status_code == 200
            assert admin.get("/pools/race", headers=ADMIN).json()["floating_used"] == 0


def test_concurrent_releases_of_one_owner_with_a_dns_name_all_succeed(live_url):
    """The orchestrator and the scheduler both release an ended member: neither may fail (a 500
    here once stopped the scheduler's framework)."""
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        assert admin.post("/pools", headers=ADMIN, json={"name": "rel", "cidr": "172.31.207.0/27"}).status_code == 201
        for round_ in range(10):
            owner = f"rel-{round_}"
            held = admin.post("/allocations", headers=SERVICE, json={
                "owner": owner, "pool": "rel", "dns_service": "release-race", "dns_name": owner, "health_tcp_port": 80})
            assert held.status_code == 201, held.text
            responses = race(live_url, 8, lambda client, i, owner=owner: client.post(
                "/allocations/release", headers=SERVICE, json={"owner": owner}))
            statuses = Counter(r.status_code for r in responses)
            assert set(statuses) <= {200, 404} and statuses[200] >= 1, (round_, statuses)
            assert admin.get("/pools/rel", headers=ADMIN).json()["floating_used"] == 0
