"""Pools and floating IPs through the API: happy paths, and bad input that changes nothing."""
import docker
import pytest
from sqlalchemy import create_engine, text

from tests.integration.network.conftest import ADMIN, SERVICE, USER


def pool(api, name="t1", cidr="172.31.204.0/26", **extra):
    return api.post("/pools", json={"name": name, "cidr": cidr, **extra}, headers=ADMIN)


def count_rows(url: str) -> tuple[int, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        result = (conn.execute(text("SELECT count(*) FROM network.pools")).scalar(),
                  conn.execute(text("SELECT count(*) FROM network.floating_ips WHERE owner IS NOT NULL")).scalar())
    engine.dispose()
    return result


def test_pool_creates_its_docker_network_and_reports_usage(api):
    created = pool(api)
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["floating_cidr"], body["auto_cidr"], body["floating_total"]) == ("172.31.204.32/27",
                                                                                 "172.31.204.0/27", 31)
    network = docker.from_env().networks.get(body["docker_network"])
    assert network.attrs["Labels"]["io.spindle.owned"] == "true"
    assert network.attrs["IPAM"]["Config"][0] == {"Subnet": "172.31.204.0/26", "Gateway": "172.31.204.1",
                                                  "IPRange": "172.31.204.0/27"}
    assert pool(api).status_code == 200, "creating the same pool again is harmless"
    api.post("/allocations", json={"owner": "m1", "pool": "t1"}, headers=SERVICE)
    assert api.get("/pools/t1", headers=ADMIN).json()["floating_used"] == 1


def test_allocation_is_idempotent_per_owner_and_release_frees(api):
    pool(api)
    first = api.post("/allocations", json={"owner": "m1", "pool": "t1"}, headers=SERVICE)
    again = api.post("/allocations", json={"owner": "m1", "pool": "t1"}, headers=SERVICE)
    other = api.post("/allocations", json={"owner": "m2", "pool": "t1"}, headers=SERVICE)
    assert (first.status_code, again.status_code, other.status_code) == (201, 200, 201)
    assert first.json()["address"] == again.json()["address"] != other.json()["address"]
    released = api.post("/allocations/release", json={"owner": "m1"}, headers=SERVICE)
    assert released.status_code == 200 and released.json()[0]["owner"] is None
    assert api.get("/allocations", params={"owner": "m1"}, headers=SERVICE).status_code == 404


@pytest.mark.parametrize("body,status,code", [
    ({"name": "bad", "cidr": "172.31.300.0/24"}, 422, "INVALID_CIDR"),
    ({"name": "bad", "cidr": "172.31.205.0/24", "gateway": "10.0.0.1"}, 422, "INVALID_GATEWAY"),
    ({"name": "bad", "cidr": "172.31.205.0/24", "floating_cidr": "172.31.206.0/25"}, 422, "RANGE_OUTSIDE_CIDR"),
    ({"name": "bad", "cidr": "172.31.205.0/24", "driver": "macvlan"}, 422, "PARENT_REQUIRED"),
    ({"name": "Bad Name", "cidr": "172.31.205.0/24"}, 422, "VALIDATION_FAILED"),
    ({"name": "bad", "cidr": "127.0.0.0/24"}, 422, "INVALID_CIDR"),
    ({"name": "bad", "cidr": "192.0.2.64/26"}, 409, "OVERLAPS_HOST_NETWORK"),
])
def test_invalid_pools_change_nothing(api, fresh_database, body, status, code):
    response = api.post("/pools", json=body, headers=ADMIN)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert count_rows(fresh_database) == (0, 0)
    assert not docker.from_env().networks.list(names=["spindle-bad"])


def test_overlapping_pool_is_refused_by_the_database(api, fresh_database):
    pool(api)
    response = pool(api, name="t2", cidr="172.31.204.32/27")
    assert response.status_code == 409 and response.json()["error"]["code"] == "POOL_OVERLAPS"
    assert response.json()["error"]["details"] == {"pools": ["t1"]}
    assert count_rows(fresh_database) == (1, 0)


def test_bad_allocations_change_nothing(api, fresh_database):
    made = pool(api, cidr="172.31.204.0/29")  # floating .4–.6: three addresses
    assert made.status_code == 201, made.text
    cases = [
        (api.post("/allocations", json={"owner": "m", "pool": "nope"}, headers=SERVICE), 404, "POOL_NOT_FOUND"),
        (api.post("/allocations/release", json={"owner": "ghost"}, headers=SERVICE), 404, "NOT_ALLOCATED"),
        (api.post("/allocations", json={"owner": "m", "pool": "t1"}, headers=USER), 403, "FORBIDDEN"),
        (api.post("/pools", json={"name": "x", "cidr": "172.31.206.0/24"}, headers=SERVICE), 403, "FORBIDDEN"),
        (api.post("/ips/172.31.204.5/attach", json={"container": "x"}, headers=SERVICE), 409, "NOT_ALLOCATED"),
        (api.post("/ips/10.1.1.1/detach", headers=SERVICE), 404, "IP_NOT_FOUND"),
        (api.post("/ips/not-an-ip/detach", headers=SERVICE), 422, "VALIDATION_FAILED"),
    ]
    for response, status, code in cases:
        assert (response.status_code, response.json()["error"]["code"]) == (status, code), response.text
    assert count_rows(fresh_database) == (1, 0)
    for i in range(3):
        assert api.post("/allocations", json={"owner": f"m{i}", "pool": "t1"}, headers=SERVICE).status_code == 201
    exhausted = api.post("/allocations", json={"owner": "m9", "pool": "t1"}, headers=SERVICE)
    assert exhausted.status_code == 409 and exhausted.json()["error"]["code"] == "POOL_EXHAUSTED"
    in_use = api.delete("/pools/t1", headers=ADMIN)
    assert in_use.status_code == 409 and in_use.json()["error"]["details"] == {"allocated": 3}
    assert count_rows(fresh_database) == (1, 3)
