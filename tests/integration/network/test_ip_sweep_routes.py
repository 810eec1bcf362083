"""What sweeps and failed launches use from network-service, on real PostgreSQL and Consul: the list
of held IPs (oldest first, with a minimum age), and releasing a cluster's members by owner prefix —
those its caller never recorded too — with their DNS names."""
import uuid

import pytest

from tests.integration.network.conftest import ADMIN, SERVICE, USER
from tests.integration.network.test_ip_batch import consul_services, held_ips, members, pool


@pytest.fixture
def cluster() -> str:
    return f"s{uuid.uuid4().hex[:10]}"


def test_held_lists_every_held_ip_with_its_owner_and_age(api, fresh_database, cluster):
    pool(api, "tsweep-a", "172.31.213.0/28")
    assert api.post("/allocations/batch", headers=SERVICE, json={
        "pool": "tsweep-a", "dns_service": cluster, "members": members(cluster, 2)}).status_code == 201
    held = api.get("/allocations/held", headers=SERVICE)
    assert held.status_code == 200, held.text
    mine = [h for h in held.json() if h["owner"].startswith(cluster)]
    assert [h["owner"] for h in mine] == [f"{cluster}-m0", f"{cluster}-m1"]
    assert mine[0]["dns"] == f"m0.{cluster}.service.spindle" and mine[0]["pool"] == "tsweep-a"
    assert mine[0]["allocated_at"].endswith("Z")
    young = api.get("/allocations/held", params={"older_than_s": 3600}, headers=SERVICE).json()
    assert [h for h in young if h["owner"].startswith(cluster)] == [], "held for less than an hour"
    assert api.get("/allocations/held", params={"older_than_s": -1}, headers=SERVICE).status_code == 422
    assert api.get("/allocations/held", headers=USER).status_code in (401, 403)


def test_releasing_by_owner_prefix_frees_the_clusters_ips_and_names_only(api, fresh_database, consul_url, cluster):
    pool(api, "tsweep-b", "172.31.213.16/28")
    other = f"s{uuid.uuid4().hex[:10]}"
    for name in (cluster, other):
        assert api.post("/allocations/batch", headers=SERVICE, json={
            "pool": "tsweep-b", "dns_service": name, "members": members(name, 2)}).status_code == 201
    assert len(consul_services(consul_url, cluster)) == 2
    released = api.post("/allocations/release", headers=SERVICE, json={"owner_prefix": f"{cluster}-"})
    assert released.status_code == 200, released.text
    assert sorted(ip["owner"] is None for ip in released.json()) == [True, True]
    assert sorted(o for o in held_ips(fresh_database) if o.startswith(("s",))) == [f"{other}-m0", f"{other}-m1"]
    assert consul_services(consul_url, cluster) == {} and len(consul_services(consul_url, other)) == 2
    again = api.post("/allocations/release", headers=SERVICE, json={"owner_prefix": f"{cluster}-"})
    assert again.status_code == 200 and again.json() == [], "holding nothing is fine"
    api.post("/allocations/release", headers=SERVICE, json={"owner_prefix": f"{other}-"})


@pytest.mark.parametrize("body", [
    {"owner_prefix": "c1-"},  # too short: a prefix names one cluster's members, never everything
    {"owner_prefix": "c123456789-", "owner": "x"},
    {"owner_prefix": "c123456789-", "owners": ["x"]},
    {},
])
def test_bad_release_requests_are_422_and_change_nothing(api, fresh_database, body):
    response = api.post("/allocations/release", headers=ADMIN, json=body)
    assert response.status_code == 422, response.text
