"""What a node may do at disk-service (role node, signed with the nodes' key): register, discover,
heartbeat, read its Mesos resources and report wipes of its own node only; never an admin's
routes, never another node's."""
from disk_helpers import SERVICE, TOKEN, add_node, fake_lsblk

from tests.support.internal import internal_headers


def as_node(node: str, component: str = "node-agent") -> dict[str, str]:
    return internal_headers(TOKEN, f"{component}/{node}", "node")


def test_a_node_acts_for_itself_only(api):
    body = {"name": "n3", "address": "10.0.0.3", "disk_root": "/srv/spindle/n3", "cpus": 4, "mem_mb": 8192}
    assert api.post("/nodes", json=body, headers=as_node("n9")).status_code == 403
    assert api.post("/nodes", json=body, headers=as_node("n3")).status_code == 201
    lsblk = {"lsblk": fake_lsblk("/srv/spindle/n3", {"hdd": 1})}
    assert api.post("/nodes/n3/discover", json=lsblk, headers=as_node("n9")).status_code == 403
    [disk] = api.post("/nodes/n3/discover", json=lsblk, headers=as_node("n3")).json()["registered"]
    assert api.post("/nodes/n3/heartbeat", headers=as_node("n3")).status_code == 200
    assert api.post("/nodes/n3/heartbeat", headers=as_node("n9")).status_code == 403
    assert api.get("/nodes/n3/mesos-resources", headers=as_node("n3", "mesos-agent")).status_code == 200
    assert api.get("/nodes/n3/mesos-resources", headers=as_node("n9", "mesos-agent")).status_code == 403

    [other] = add_node(api, "n1", {"hdd": 1})
    for d in (disk, other):  # both held, then released: wiping until their nodes report
        assert api.post("/allocations", json={"node": d["node"], "disk_class": "hdd", "count": 1,
                                              "owner": f"m-{d['id']}"}, headers=SERVICE).status_code == 201
        assert api.post("/allocations/release", json={"owner": f"m-{d['id']}"}, headers=SERVICE).status_code == 200
    refused = api.post(f"/disks/{other['id']}/wipe-result", json={"ok": True}, headers=as_node("n3"))
    assert refused.status_code == 403 and refused.json()["error"]["details"]["node"] == "n1"
    own = api.post(f"/disks/{disk['id']}/wipe-result", json={"ok": True}, headers=as_node("n3"))
    assert own.json()["state"] == "free"
    assert api.get(f"/disks/{other['id']}", headers=SERVICE).json()["state"] == "wiping"


def test_a_node_is_no_admin(api):
    add_node(api, "n1", {"hdd": 1})
    for method, path in (("GET", "/nodes"), ("POST", "/disks/1/retire"), ("POST", "/allocations/release")):
        refused = api.request(method, path, json={"reason": "x", "owner": "m"}, headers=as_node("n1"))
        assert refused.status_code == 403 and refused.json()["error"]["details"] == {"role": "node"}, (method, path)
