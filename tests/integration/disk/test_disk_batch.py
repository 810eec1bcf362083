"""Per-cluster batches against real PostgreSQL: every member's disks in one call, all or nothing,
idempotent on retry; many owners released in one call; two batches racing for the same disks."""
from collections import Counter

import httpx
from disk_helpers import ADMIN, SERVICE, TOKEN, USER, add_node
from sqlalchemy import create_engine, text

from spindle_common.clients import DiskClient
from spindle_common.errors import ApiError
from tests.support.race import race


def error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    return body["error"]


def states(api, node):
    items = api.get("/disks", params={"node": node, "page_size": 1000}, headers=ADMIN).json()["items"]
    return {d["id"]: (d["state"], d["owner"]) for d in items}


def db_counts(url: str) -> tuple[int, int]:
    """(active allocation rows, audit rows other than the first one of each disk)."""
    engine = create_engine(url)
    with engine.connect() as conn:
        counts = (conn.execute(text("SELECT count(*) FROM disk.allocations WHERE released_at IS NULL")).scalar(),
                  conn.execute(text("SELECT count(*) FROM disk.disk_transitions WHERE from_state IS NOT NULL"))
                  .scalar())
    engine.dispose()
    return counts


def ask(owner, node, disk_class, count):
    return {"owner": owner, "node": node, "disk_class": disk_class, "count": count}


CLUSTER = [ask("c1-master-0", "n1", "ssd", 1),
           ask("c1-worker-0", "n1", "hdd", 2), ask("c1-worker-0", "n1", "ssd", 1),
           ask("c1-worker-1", "n2", "hdd", 2)]


def test_batch_allocates_every_member_in_one_call_and_a_retry_returns_the_same_disks(api, disk_db):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    add_node(api, "n2", {"hdd": 4})
    first = api.post("/allocations/batch", json={"requests": CLUSTER}, headers=SERVICE)
    assert first.status_code == 201, first.text
    held = first.json()["allocations"]
    assert sorted(held) == ["c1-master-0", "c1-worker-0", "c1-worker-1"]
    assert [d["disk_class"] for d in held["c1-worker-0"]] == ["hdd", "hdd", "ssd"], "in request order"
    assert {d["node"] for d in held["c1-worker-1"]} == {"n2"} and len(held["c1-worker-1"]) == 2
    disk = held["c1-master-0"][0]
    assert set(disk) == {"id", "node", "device_path", "mount_point", "disk_class", "size_bytes"}
    assert disk["mount_point"].startswith("/srv/spindle/n1/") and disk["size_bytes"] == 4 << 30
    ids = [d["id"] for disks in held.values() for d in disks]
    assert len(set(ids)) == 6
    everything = {**states(api, "n1"), **states(api, "n2")}
    assert {everything[d["id"]] for d in held["c1-worker-0"]} == {("allocated", "c1-worker-0")}
    assert Counter(state for state, _ in everything.values()) == {"allocated": 6, "free": 4}
    assert db_counts(disk_db) == (6, 6), "one allocation row and one audit row per disk"
    log = api.get(f"/disks/{disk['id']}/transitions", headers=ADMIN).json()
    assert [(t["from_state"], t["to_state"], t["actor"], t["owner"]) for t in log][-1] == \
        ("free", "allocated", "scheduler", "c1-master-0")
    assert log[-1]["at"].endswith("Z"), "timestamps are aware, RFC 3339"

    again = api.post("/allocations/batch", json={"requests": CLUSTER}, headers=SERVICE)
    assert again.status_code == 200 and again.json() == first.json(), "a retry returns the same disks"
    # A retry that also brings a member the first call did not have: the others keep theirs.
    grown = api.post("/allocations/batch", json={"requests": CLUSTER + [ask("c1-worker-2", "n2", "hdd", 1)]},
                     headers=SERVICE)
    assert grown.status_code == 201
    assert {k: v for k, v in grown.json()["allocations"].items() if k != "c1-worker-2"} == held
    assert db_counts(disk_db) == (7, 7)


def test_a_batch_that_cannot_be_satisfied_holds_nothing(api, disk_db):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    add_node(api, "n2", {"hdd": 4})
    before = {**states(api, "n1"), **states(api, "n2")}
    # The last request asks more hdd disks than n2 has.
    too_many = CLUSTER + [ask("c1-worker-2", "n2", "hdd", 3)]
    e = error(api.post("/allocations/batch", json={"requests": too_many}, headers=SERVICE), 409, "INSUFFICIENT_DISKS")
    assert e["details"] == {"request": 4, "owner": "c1-worker-2", "node": "n2", "disk_class": "hdd", "requested": 3,
                            "free": 4, "requested_on_node": 5}
    assert {**states(api, "n1"), **states(api, "n2")} == before
    assert db_counts(disk_db) == (0, 0)

    # Disks taken meanwhile count: n1 has 2 ssd, one goes to somebody else first.
    assert api.post("/allocations", json=ask("other", "n1", "ssd", 1), headers=SERVICE).status_code == 201
    e = error(api.post("/allocations/batch", json={"requests": CLUSTER}, headers=SERVICE), 409, "INSUFFICIENT_DISKS")
    assert (e["details"]["request"], e["details"]["owner"], e["details"]["free"]) == (2, "c1-worker-0", 1)
    assert db_counts(disk_db) == (1, 1)


def test_conflicts_and_bad_batches_change_nothing(api, disk_db):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    add_node(api, "n2", {"hdd": 4})
    assert api.post("/allocations", json=ask("c1-worker-1", "n1", "hdd", 1), headers=SERVICE).status_code == 201
    before = {**states(api, "n1"), **states(api, "n2")}
    e = error(api.post("/allocations/batch", json={"requests": CLUSTER}, headers=SERVICE), 409, "OWNER_ON_OTHER_NODE")
    assert e["details"]["request"] == 3 and e["details"]["nodes"] == ["n1"]
    moved = [*CLUSTER[:3], ask("c1-worker-1", "n1", "hdd", 2)]
    e = error(api.post("/allocations/batch", json={"requests": moved}, headers=SERVICE), 409, "OWNER_HOLDS_OTHER_COUNT")
    assert e["details"]["request"] == 3 and len(e["details"]["held"]) == 1
    e = error(api.post("/allocations/batch", json={"requests": [*CLUSTER[:3], ask("x", "ghost", "hdd", 1)]},
                       headers=SERVICE), 404, "NODE_NOT_FOUND")
    assert e["details"] == {"node": "ghost", "request": 3}
    for bad in ([], [ask("a", "n1", "hdd", 0)], [ask("a", "n1", "tape", 1)],
                [ask("a", "n1", "hdd", 1), ask("a", "n1", "hdd", 1)],  # one owner, one class, twice
                [ask("a", "n1", "hdd", 1), ask("a", "n2", "ssd", 1)]):  # one owner on two nodes
        error(api.post("/allocations/batch", json={"requests": bad}, headers=SERVICE), 422, "VALIDATION_FAILED")
    error(api.post("/allocations/batch", json={"requests": CLUSTER},
                   headers=USER), 403, "FORBIDDEN")
    assert {**states(api, "n1"), **states(api, "n2")} == before
    assert db_counts(disk_db) == (1, 1)


def test_release_many_owners_in_one_call(api, disk_db):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    add_node(api, "n2", {"hdd": 4})
    held = api.post("/allocations/batch", json={"requests": CLUSTER}, headers=SERVICE).json()["allocations"]
    failed = held["c1-worker-0"][2]["id"]
    api.post(f"/disks/{failed}/fail", json={"reason": "smart"}, headers=ADMIN)
    owners = ["c1-master-0", "c1-worker-0", "c1-worker-1", "never-held-anything"]
    released = api.post("/allocations/release", json={"owners": owners}, headers=SERVICE)
    assert released.status_code == 200, released.text
    wiping = sorted(d["id"] for disks in held.values() for d in disks if d["id"] != failed)
    assert sorted(d["id"] for d in released.json()) == wiping
    assert all(d["state"] == "wiping" and d["updated_at"].endswith("Z") for d in released.json())
    everything = {**states(api, "n1"), **states(api, "n2")}
    assert {everything[i] for i in wiping} == {("wiping", None)} and everything[failed] == ("failed", None)
    assert db_counts(disk_db)[0] == 0
    log = api.get(f"/disks/{wiping[0]}/transitions", headers=ADMIN).json()
    assert (log[-1]["from_state"], log[-1]["to_state"], log[-1]["reason"]) == ("allocated", "wiping", "released")
    again = api.post("/allocations/release", json={"owners": owners}, headers=SERVICE)
    assert again.status_code == 200 and again.json() == [], "releasing again changes nothing"
    for bad in ({"owners": []}, {"owners": ["a"], "owner": "a"}, {"owners": [""]}):
        error(api.post("/allocations/release", json=bad, headers=SERVICE), 422, "VALIDATION_FAILED")
    # The single-owner form is unchanged.
    error(api.post("/allocations/release", json={"owner": "c1-master-0"}, headers=SERVICE), 409, "NOT_ALLOCATED")


def test_two_batches_racing_for_the_same_disks_one_wins_wholly(live_url, disk_db):
    """Each round two clusters want all 4 hdd of a node (2 members × 2): exactly one gets every
    disk it asked for, the other a 409 and nothing at all."""
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        for round_ in range(20):
            node = f"race-{round_}"
            add_node(admin, node, {"hdd": 4, "ssd": 1})
            batches = [[ask(f"r{round_}-c{c}-m0", node, "hdd", 2), ask(f"r{round_}-c{c}-m1", node, "hdd", 2),
                        ask(f"r{round_}-c{c}-m1", node, "ssd", 1)] for c in range(2)]
            responses = race(live_url, 2, lambda client, i, batches=batches: client.post(
                "/allocations/batch", headers=SERVICE, json={"requests": batches[i]}))
            statuses = sorted(r.status_code for r in responses)
            assert statuses == [201, 409], (round_, [r.text for r in responses])
            winner = next(i for i, r in enumerate(responses) if r.status_code == 201)
            loser = 1 - winner
            assert responses[loser].json()["error"]["code"] == "INSUFFICIENT_DISKS"
            won = responses[winner].json()["allocations"]
            assert sorted(len(d) for d in won.values()) == [2, 3]
            now = states(admin, node)
            assert Counter(s for s, _ in now.values()) == {"allocated": 5}
            assert {o for _, o in now.values()} == {f"r{round_}-c{winner}-m0", f"r{round_}-c{winner}-m1"}
            for owner in (f"r{round_}-c{loser}-m0", f"r{round_}-c{loser}-m1"):
                assert admin.get("/allocations", params={"owner": owner}, headers=SERVICE).status_code == 404


def test_the_same_batch_twice_at_once_holds_one_set_of_disks(live_url):
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        for round_ in range(10):
            node = f"twice-{round_}"
            add_node(admin, node, {"hdd": 8})
            body = {"requests": [ask(f"t{round_}-m{i}", node, "hdd", 2) for i in range(3)]}
            responses = race(live_url, 4, lambda client, i, body=body: client.post("/allocations/batch",
                                                                                   headers=SERVICE, json=body))
            assert sorted(r.status_code for r in responses) == [200, 200, 200, 201], [r.text for r in responses]
            assert len({r.text for r in responses}) == 1, "every answer names the same disks"
            assert Counter(s for s, _ in states(admin, node).values()) == {"allocated": 6, "free": 2}


def test_disk_client_batch_methods(live_url):
    with httpx.Client(base_url=live_url, timeout=60) as admin:
        add_node(admin, "n1", {"hdd": 4, "ssd": 2})
    with DiskClient(live_url, TOKEN, "scheduler") as disks:
        held = disks.allocate_batch([ask("m0", "n1", "hdd", 2), ask("m1", "n1", "ssd", 2)])
        assert {owner: len(d) for owner, d in held.items()} == {"m0": 2, "m1": 2}
        assert disks.allocate_batch([ask("m0", "n1", "hdd", 2), ask("m1", "n1", "ssd", 2)]) == held
        try:
            disks.allocate_batch([ask("m2", "n1", "hdd", 3)])
            raise AssertionError("expected a 409")
        except ApiError as exc:
            assert (exc.status, exc.code) == (409, "INSUFFICIENT_DISKS")
        released = disks.release_many(["m0", "m1", "m2"])
        assert len(released) == 4
        assert disks.release_many([]) == [] and disks.held_by("m0") == []
