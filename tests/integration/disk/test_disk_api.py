"""disk-service's admin and allocation API against real PostgreSQL: behaviour, and bad input that
leaves every state as it was."""
import pytest
from disk_helpers import ADMIN, SERVICE, USER, add_node, fake_lsblk
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError


def states(api, node):
    items = api.get("/disks", params={"node": node, "page_size": 1000}, headers=ADMIN).json()["items"]
    return {d["id"]: (d["state"], d["owner"]) for d in items}


def error(response, status, code):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    return body["error"]


def test_node_registration_is_idempotent_and_conflicts_are_409(api):
    node = {"name": "n1", "address": "10.0.0.1", "disk_root": "/srv/spindle/n1"}
    assert api.post("/nodes", json=node, headers=ADMIN).status_code == 201
    assert api.post("/nodes", json=node, headers=ADMIN).status_code == 200
    error(api.post("/nodes", json={**node, "disk_root": "/other"}, headers=ADMIN), 409, "NODE_EXISTS")
    assert [n["name"] for n in api.get("/nodes", headers=ADMIN).json()] == ["n1"]
    error(api.get("/nodes/nope", headers=ADMIN), 404, "NODE_NOT_FOUND")
    error(api.post("/nodes", json={**node, "name": "bad name"}, headers=ADMIN), 422, "VALIDATION_FAILED")


def test_discovery_takes_only_spindle_disks_and_is_repeatable(api):
    disks = add_node(api, "n1", {"hdd": 4, "ssd": 2})
    assert [d["disk_class"] for d in disks] == ["hdd"] * 4 + ["ssd"] * 2
    assert all(d["state"] == "free" and d["device_path"] != "/dev/vda" for d in disks)
    again = api.post("/nodes/n1/discover", json={"lsblk": fake_lsblk("/srv/spindle/n1", {"hdd": 4, "ssd": 2})},
                     headers=ADMIN).json()
    assert again["registered"] == [] and len(again["updated"]) == 6
    assert [i["device_path"] for i in again["ignored"]] == ["/dev/vda"]
    error(api.post("/nodes/n1/discover", json={}, headers=ADMIN), 422, "LSBLK_REQUIRED")
    error(api.post("/nodes/n1/discover", json={"lsblk": {"nope": 1}}, headers=ADMIN), 422, "INVALID_LSBLK")


def test_admin_chosen_class_wins_over_detection(api):
    api.post("/nodes", json={"name": "n1", "address": "10.0.0.1", "disk_root": "/srv/spindle/n1"}, headers=ADMIN)
    body = {"lsblk": fake_lsblk("/srv/spindle/n1", {"ssd": 2}), "classes": {"spdl-1": "nvme", "spdl-2": "hdd"}}
    found = api.post("/nodes/n1/discover", json=body, headers=ADMIN).json()["registered"]
    assert [d["disk_class"] for d in found] == ["nvme", "hdd"]
    # Discovering again keeps classes, unless the admin names a disk again.
    again = api.post("/nodes/n1/discover", json={**body, "classes": {"spdl-2": "ssd"}}, headers=ADMIN).json()
    assert [d["disk_class"] for d in again["updated"]] == ["nvme", "ssd"]
    error(api.post("/nodes/n1/discover", json={**body, "classes": {"spdl-1": "tape"}}, headers=ADMIN),
          422, "VALIDATION_FAILED")


def test_list_filters_and_pages(api):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    add_node(api, "n2", {"hdd": 3})
    seen, token = [], None
    while True:
        page = api.get("/disks", params={"class": "hdd", "page_size": 2, **({"page_token": token} if token else {})},
                       headers=ADMIN).json()
        seen += page["items"]
        token = page["next_page_token"]
        if not token:
            break
    assert len(seen) == 7 and len({d["id"] for d in seen}) == 7
    assert {d["node"] for d in seen} == {"n1", "n2"}
    ssd = api.get("/disks", params={"node": "n1", "class": "ssd", "state": "free"}, headers=ADMIN).json()["items"]
    assert len(ssd) == 2
    error(api.get("/disks", params={"class": "floppy"}, headers=ADMIN), 422, "VALIDATION_FAILED")
    error(api.get("/disks", params={"page_token": "garbage"}, headers=ADMIN), 422, "INVALID_PAGE_TOKEN")


def test_edit_class_and_labels_and_invalid_class_changes_nothing(api):
    disk = add_node(api, "n1", {"hdd": 1})[0]
    r = api.patch(f"/disks/{disk['id']}", json={"disk_class": "ssd", "labels": {"rack": "r7"}}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["disk_class"] == "ssd" and r.json()["labels"] == {"rack": "r7"}
    error(api.patch(f"/disks/{disk['id']}", json={"disk_class": "tape"}, headers=ADMIN), 422, "VALIDATION_FAILED")
    assert api.get(f"/disks/{disk['id']}", headers=ADMIN).json()["disk_class"] == "ssd"
    error(api.patch("/disks/999999", json={"disk_class": "ssd"}, headers=ADMIN), 404, "DISK_NOT_FOUND")


def test_retire_fail_and_illegal_transitions_with_audit_log(api):
    a, b, c = (d["id"] for d in add_node(api, "n1", {"hdd": 3}))
    assert api.post(f"/disks/{a}/retire", json={"reason": "old"}, headers=ADMIN).json()["state"] == "retired"
    error(api.post(f"/disks/{a}/retire", json={}, headers=ADMIN), 409, "ILLEGAL_TRANSITION")
    api.post("/allocations", json={"node": "n1", "disk_class": "hdd", "count": 1, "owner": "m-1"}, headers=SERVICE)
    allocated = next(i for i, (s, _) in states(api, "n1").items() if s == "allocated")
    e = error(api.post(f"/disks/{allocated}/retire", json={}, headers=ADMIN), 409, "ILLEGAL_TRANSITION")
    assert e["details"]["from"] == "allocated" and states(api, "n1")[allocated] == ("allocated", "m-1")
    failed = api.post(f"/disks/{allocated}/fail", json={"reason": "smart errors"}, headers=ADMIN).json()
    assert failed["state"] == "failed" and failed["state_reason"] == "smart errors"
    log = api.get(f"/disks/{allocated}/transitions", headers=ADMIN).json()
    assert [(t["from_state"], t["to_state"], t["actor"], t["owner"]) for t in log] == [
        (None, "free", "test-admin", None),
        ("free", "allocated", "scheduler", "m-1"),
        ("allocated", "failed", "test-admin", "m-1"),
    ]
    # Not wiped from under its owner; once released it stays quarantined until an admin wipes it.
    error(api.post(f"/disks/{allocated}/wipe", json={}, headers=ADMIN), 409, "DISK_STILL_ALLOCATED")
    released = api.post("/allocations/release", json={"owner": "m-1"}, headers=SERVICE)
    assert released.status_code == 200 and released.json() == []
    assert states(api, "n1")[allocated] == ("failed", None)
    assert api.post(f"/disks/{allocated}/wipe", json={}, headers=ADMIN).json()["state"] == "wiping"


def test_roles_and_tokens(api):
    disk = add_node(api, "n1", {"hdd": 1})[0]
    before = states(api, "n1")
    error(api.post(f"/disks/{disk['id']}/retire", json={}, headers=SERVICE), 403, "FORBIDDEN")
    error(api.post("/allocations", json={"node": "n1", "disk_class": "hdd", "count": 1, "owner": "x"},
                   headers=USER), 403, "FORBIDDEN")
    error(api.get("/nodes", headers=USER), 403, "FORBIDDEN")
    error(api.get("/nodes", headers={**ADMIN, "Authorization": "Bearer wrong"}), 401, "UNAUTHENTICATED")
    error(api.post("/nodes", json={"name": "n2", "address": "a", "disk_root": "/x"}, headers=SERVICE),
          403, "FORBIDDEN")
    assert states(api, "n1") == before


def test_allocation_is_all_or_nothing_idempotent_and_release_wipes(api):
    add_node(api, "n1", {"hdd": 4, "ssd": 2})
    ask = {"node": "n1", "disk_class": "hdd", "count": 3, "owner": "cluster-7/worker-0"}
    first = api.post("/allocations", json=ask, headers=SERVICE)
    assert first.status_code == 201
    ids = [d["id"] for d in first.json()["disks"]]
    assert len(ids) == 3 and all(d["state"] == "allocated" and d["owner"] == ask["owner"]
                                 for d in first.json()["disks"])
    again = api.post("/allocations", json=ask, headers=SERVICE)
    assert again.status_code == 200 and [d["id"] for d in again.json()["disks"]] == ids
    error(api.post("/allocations", json={**ask, "count": 2}, headers=SERVICE), 409, "OWNER_HOLDS_OTHER_COUNT")

    before = states(api, "n1")
    e = error(api.post("/allocations", json={**ask, "owner": "other", "count": 2}, headers=SERVICE),
              409, "INSUFFICIENT_DISKS")
    assert e["details"] == {"node": "n1", "disk_class": "hdd", "requested": 2, "free": 1}
    error(api.post("/allocations", json={**ask, "owner": "o", "count": 0}, headers=SERVICE), 422, "VALIDATION_FAILED")
    error(api.post("/allocations", json={**ask, "owner": "o", "disk_class": "tape"}, headers=SERVICE),
          422, "VALIDATION_FAILED")
    error(api.post("/allocations", json={**ask, "owner": "o", "node": "ghost"}, headers=SERVICE), 404, "NODE_NOT_FOUND")
    assert states(api, "n1") == before
    assert api.get("/allocations", params={"owner": ask["owner"]}, headers=SERVICE).json()["node"] == "n1"

    free_ssd = next(i for i, (s, _) in before.items() if s == "free")
    error(api.post("/allocations/release", json={"disk_ids": [ids[0], free_ssd]}, headers=SERVICE),
          409, "NOT_ALLOCATED")
    error(api.post("/allocations/release", json={"disk_ids": [424242]}, headers=SERVICE), 404, "DISK_NOT_FOUND")
    error(api.post("/allocations/release", json={"owner": "nobody"}, headers=SERVICE), 409, "NOT_ALLOCATED")
    error(api.post("/allocations/release", json={}, headers=SERVICE), 422, "VALIDATION_FAILED")
    assert states(api, "n1") == before

    released = api.post("/allocations/release", json={"owner": ask["owner"]}, headers=SERVICE)
    assert released.status_code == 200 and sorted(d["id"] for d in released.json()) == sorted(ids)
    # n1 is a remote node: its disks stay in wiping until the node reports its wipe.
    assert {states(api, "n1")[i] for i in ids} == {("wiping", None)}
    error(api.post("/allocations/release", json={"disk_ids": ids}, headers=SERVICE), 409, "NOT_ALLOCATED")
    assert api.post(f"/disks/{ids[0]}/wipe-result", json={"ok": True}, headers=SERVICE).json()["state"] == "free"
    bad = api.post(f"/disks/{ids[1]}/wipe-result", json={"ok": False, "reason": "mkfs: I/O error"}, headers=SERVICE)
    assert bad.json()["state"] == "failed" and bad.json()["state_reason"] == "mkfs: I/O error"
    error(api.post(f"/disks/{ids[0]}/wipe-result", json={"ok": True}, headers=SERVICE), 409, "ILLEGAL_TRANSITION")


def test_owner_cannot_spread_over_two_nodes(api):
    add_node(api, "n1", {"hdd": 2})
    add_node(api, "n2", {"hdd": 2})
    ask = {"node": "n1", "disk_class": "hdd", "count": 1, "owner": "m"}
    assert api.post("/allocations", json=ask, headers=SERVICE).status_code == 201
    error(api.post("/allocations", json={**ask, "node": "n2"}, headers=SERVICE), 409, "OWNER_ON_OTHER_NODE")


def test_mesos_resources_of_a_node(api):
    disks = add_node(api, "n1", {"hdd": 2, "ssd": 1})
    api.post(f"/disks/{disks[2]['id']}/fail", json={}, headers=ADMIN)
    r = api.get("/nodes/n1/mesos-resources", headers=SERVICE)
    assert r.status_code == 200
    assert r.json() == [
        {"name": "cpus", "type": "SCALAR", "scalar": {"value": 12.0}},
        {"name": "mem", "type": "SCALAR", "scalar": {"value": 65536}},
    ] + [
        {"name": "disk", "type": "SCALAR", "scalar": {"value": 4096},
         "disk": {"source": {"type": "MOUNT", "mount": {"root": f"/srv/spindle/n1/disk{n}"}}},
         "reservations": [{"type": "STATIC", "role": "spindle"}]}
        for n in (1, 2)
    ]
    error(api.get("/nodes/ghost/mesos-resources", headers=SERVICE), 404, "NODE_NOT_FOUND")


def test_the_database_itself_refuses_a_second_owner(api, disk_db):
    disk = add_node(api, "n1", {"hdd": 1})[0]
    engine = create_engine(disk_db)
    insert = text("INSERT INTO disk.allocations (disk_id, owner, allocated_by) VALUES (:d, :o, 'sql')")
    with engine.begin() as conn:
        conn.execute(insert, {"d": disk["id"], "o": "a"})
    with pytest.raises(IntegrityError, match="uq_allocations_active_disk"):
        with engine.begin() as conn:
            conn.execute(insert, {"d": disk["id"], "o": "b"})
    with engine.begin() as conn:  # a released allocation does not block the next one
        conn.execute(text("UPDATE disk.allocations SET released_at = now() WHERE disk_id = :d"), {"d": disk["id"]})
        conn.execute(insert, {"d": disk["id"], "o": "b"})
    engine.dispose()
