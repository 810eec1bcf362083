"""Exclusive allocation under contention, against real PostgreSQL over real HTTP: 50 parallel
requests (each its own connection) for the last 10 free disks — exactly 10 win, no disk twice."""
from collections import Counter

import httpx
import pytest
from disk_helpers import ADMIN, SERVICE, add_node
from sqlalchemy import create_engine, text

from tests.support.race import race

ROUNDS = 4
CLIENTS = 50


def race_for_disks(url: str, node: str, per_request: int) -> list[httpx.Response]:
    """CLIENTS parallel requests, each asking for ``per_request`` disks for an owner of its own."""
    return race(url, CLIENTS, lambda client, i: client.post("/allocations", headers=SERVICE, json={
        "node": node, "disk_class": "hdd", "count": per_request, "owner": f"{node}/member-{i}"}))


@pytest.mark.parametrize("per_request", [1, 2])
def test_fifty_requests_for_the_last_ten_disks(live_url, disk_db, per_request):
    engine = create_engine(disk_db)
    with httpx.Client(base_url=live_url) as admin:
        for round_ in range(ROUNDS):
            node = f"race{per_request}-{round_}"
            add_node(admin, node, {"hdd": 14, "ssd": 2})
            # Take 4 first so the race is for the last 10 free hdd disks.
            taken = admin.post("/allocations", headers=SERVICE,
                               json={"node": node, "disk_class": "hdd", "count": 4, "owner": f"{node}/early"})
            assert taken.status_code == 201, taken.text

            responses = race_for_disks(live_url, node, per_request)
            statuses = Counter(r.status_code for r in responses)
            assert statuses == {201: 10 // per_request, 409: CLIENTS - 10 // per_request}, (round_, statuses)
            assert all(r.json()["error"]["code"] == "INSUFFICIENT_DISKS" for r in responses if r.status_code == 409)
            won = [d["id"] for r in responses if r.status_code == 201 for d in r.json()["disks"]]
            assert len(won) == 10 and len(set(won)) == 10
            assert all(len(r.json()["disks"]) == per_request for r in responses if r.status_code == 201)

            disks = admin.get("/disks", params={"node": node, "class": "hdd"}, headers=ADMIN).json()["items"]
            assert Counter(d["state"] for d in disks) == {"allocated": 14}
            with engine.connect() as conn:
                per_disk = conn.execute(text(
                    "SELECT a.disk_id, count(*) FROM disk.allocations a JOIN disk.disks d ON d.id = a.disk_id "
                    "JOIN disk.nodes n ON n.id = d.node_id WHERE n.name = :n AND a.released_at IS NULL "
                    "GROUP BY a.disk_id"), {"n": node}).all()
            assert len(per_disk) == 14 and all(count == 1 for _, count in per_disk)
    engine.dispose()
