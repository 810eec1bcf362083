"""POST /placements/dry-run with caller-supplied offers: plans, reasons, auth and the error envelope
(the app is built without entering its lifespan: no Consul, no Mesos, no database)."""
import pytest
from fastapi.testclient import TestClient

from spindle_scheduler.core.config import Settings
from spindle_scheduler.main import build_app
from tests.support.internal import internal_headers

SERVICE = internal_headers("t", "orchestrator", "service")


@pytest.fixture(scope="module")
def client():
    return TestClient(build_app(Settings(internal_token="t")))


def offer(name, hdd=2, ssd=0, cpus=4, mem_mb=8192, numa=None):
    disks = [{"disk_id": f"/mnt/{c}{i}", "disk_class": c, "size_mb": 1e6, "root": f"/mnt/{c}{i}"}
             for c, n in (("hdd", hdd), ("ssd", ssd)) for i in range(n)]
    return {"node": name, "cpus": cpus, "mem_mb": mem_mb, "disks": disks, "numa": numa or {}}


def body(members, offers, **options):
    return {"cluster_id": "c1", "members": members, "offers": offers, **options}


def worker(i, **over):
    return {"member_id": f"w{i}", "role": "worker", "cpus": 1, "mem_mb": 1024, "disks": {"hdd": 1}, **over}


def test_places_members_spread_with_their_disks_and_cpus(client):
    r = client.post("/placements/dry-run", headers=SERVICE, json=body(
        [worker(1, cpuset=2), worker(2)], [offer("n1", numa={"0": [0, 1, 2, 3]}), offer("n2")]))
    assert r.status_code == 200
    plan = r.json()
    assert plan["placeable"] and plan["reasons"] == [] and plan["summary"] == "2 members placed"
    by_member = {m["member_id"]: m for m in plan["members"]}
    assert by_member["w1"] == {"member_id": "w1", "node": "n1", "disks": ["/mnt/hdd0"], "cpus": [0, 1]}
    assert by_member["w2"]["node"] == "n2" and by_member["w2"]["cpus"] == []


def test_unplaceable_returns_reasons_per_node_and_a_summary(client):
    r = client.post("/placements/dry-run", headers=SERVICE, json=body(
        [worker(1, disks={"ssd": 2})], [offer("n1", ssd=1), offer("n2", cpus=0.5)]))
    assert r.status_code == 200
    plan = r.json()
    assert not plan["placeable"] and plan["members"] == []
    assert plan["reasons"] == [{"member_id": "w1", "nodes": [
        {"node": "n1", "constraint": "disks", "message": "needs 2 ssd disks, 1 free"},
        {"node": "n2", "constraint": "cpus", "message": "needs 1 cpus, 0.5 free"}]}]
    assert plan["summary"] == "w1 fits no node: n1: needs 2 ssd disks, 1 free; n2: needs 1 cpus, 0.5 free"


def test_options_reach_placement(client):
    offers = [offer("n1"), offer("n2"), offer("n3")]
    preferred = client.post("/placements/dry-run", headers=SERVICE,
                            json=body([worker(1)], offers, preferred_hosts=["n3"])).json()
    assert preferred["members"][0]["node"] == "n3"
    masters = [worker(i, role="master", disks={}) for i in range(2)]
    strict = client.post("/placements/dry-run", headers=SERVICE,
                         json=body(masters, [offer("n1")], strategy="pack", anti_affinity_roles=["master"])).json()
    assert not strict["placeable"] and strict["reasons"][0]["nodes"][0]["constraint"] == "anti_affinity"
    excluded = client.post("/placements/dry-run", headers=SERVICE,
                           json=body([worker(1)], offers, excluded_hosts=["n1", "n2"])).json()
    assert excluded["members"][0]["node"] == "n3"
    nowhere = client.post("/placements/dry-run", headers=SERVICE,
                          json=body([worker(1)], offers[:1], excluded_hosts=["n1"])).json()
    assert not nowhere["placeable"] and nowhere["reasons"] == [{"member_id": "w1", "nodes": [
        {"node": "n1", "constraint": "excluded", "message": "excluded by the launch's placement (excluded_nodes)"}]}]


def test_members_running_on_a_node_count_for_anti_affinity(client):
    running = [{**offer("n1"), "running": [["c1", "worker"]]}, offer("n2")]
    plan = client.post("/placements/dry-run", headers=SERVICE,
                       json=body([worker(2)], running, strategy="pack", anti_affinity_roles=["worker"])).json()
    assert plan["members"][0]["node"] == "n2"
    full = client.post("/placements/dry-run", headers=SERVICE,
                       json=body([worker(2)], running[:1], anti_affinity_roles=["worker"])).json()
    assert full["summary"] == ("w2 fits no node: n1: already has a member of role worker of cluster c1 "
                               "(anti-affinity: one per node)")


def test_a_dry_run_holds_nothing(client):
    first = client.post("/placements/dry-run", headers=SERVICE, json=body([worker(1)], [offer("n1", hdd=1)])).json()
    again = client.post("/placements/dry-run", headers=SERVICE, json=body([worker(1)], [offer("n1", hdd=1)])).json()
    assert first == again and first["placeable"]


@pytest.mark.parametrize("bad,field", [
    (body([worker(1, cpus=-1)], [offer("n1")]), "body.members.0.cpus"),
    (body([worker(1, disks={"floppy": 1})], [offer("n1")]), "body.members.0.disks.floppy.[key]"),
    (body([], [offer("n1")]), "body.members"),
    (body([worker(1), worker(1)], [offer("n1")]), "body"),
    (body([worker(1)], [{**offer("n1"), "cpus": -2}]), "body.offers.0.cpus"),
    (body([worker(1)], [{**offer("n1"), "disks": [{"disk_id": "d", "disk_class": "tape"}]}]),
     "body.offers.0.disks.0.disk_class"),
    (body([worker(1)], [offer("n1"), offer("n1")]), "body"),
    (body([worker(1)], [offer("n1", numa={"0": [0, 1], "1": [1]})]), "body.offers.0"),
    (body([worker(1)], [offer("n1")], strategy="random"), "body.strategy"),
    (body([worker(1)], [offer("n1")], excluded_hosts=[""]), "body.excluded_hosts.0"),
    (body([worker(1)], [offer("n1")], anti_affinity_roles=[3]), "body.anti_affinity_roles.0"),
    (body([worker(1, cpuset=0)], [offer("n1")]), "body.members.0.cpuset"),
])
def test_invalid_input_is_a_422_envelope(client, bad, field):
    r = client.post("/placements/dry-run", headers=SERVICE, json=bad)
    assert r.status_code == 422
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_FAILED" and error["message"] == "the request is not valid"
    assert field in [e["field"] for e in error["details"]["errors"]], error


def test_unknown_disk_class_is_named(client):
    r = client.post("/placements/dry-run", headers=SERVICE,
                    json=body([worker(1, disks={"floppy": 1})], [offer("n1")]))
    [error] = r.json()["error"]["details"]["errors"]
    assert (error["field"], error["problem"]) == ("body.members.0.disks.floppy.[key]",
                                                  "Input should be 'hdd', 'ssd' or 'nvme'")


@pytest.mark.parametrize("headers,status,code", [
    ({}, 401, "UNAUTHENTICATED"),
    ({**SERVICE, "Authorization": "Bearer wrong"}, 401, "UNAUTHENTICATED"),
    (internal_headers("t", "orchestrator", "user"), 403, "FORBIDDEN"),
])
def test_only_services_and_admins_may_ask(client, headers, status, code):
    r = client.post("/placements/dry-run", headers=headers, json=body([worker(1)], [offer("n1")]))
    assert r.status_code == status and r.json()["error"]["code"] == code


def test_admins_may_ask(client):
    r = client.post("/placements/dry-run", headers=internal_headers("t", "orchestrator", "admin"),
                    json=body([worker(1)], [offer("n1")]))
    assert r.status_code == 200 and r.json()["placeable"]


def test_without_offers_and_without_mesos_it_says_so(client):
    r = client.post("/placements/dry-run", headers=SERVICE, json={"cluster_id": "c1", "members": [worker(1)]})
    assert r.status_code == 503 and r.json()["error"]["code"] == "NO_MESOS_MASTER"


def test_without_offers_it_places_on_the_mesos_offers_held_now_with_the_executors_share():
    from types import SimpleNamespace

    from spindle_scheduler.mesos.offers import OfferedDisk, ParsedOffer

    app = build_app(Settings(internal_token="t"))
    held = ParsedOffer("o-1", "a-1", "node-1", cpus=2.0, mem_mb=2048.0,
                       disks=[OfferedDisk("/disks/d1", 4096, {}), OfferedDisk("/disks/d2", 4096, {})])
    classes = {"/disks/d1": "ssd", "/disks/d2": "hdd"}
    app.state.framework = SimpleNamespace(last_offers={"node-1": held}, platform_nodes=lambda: {"node-1"},
                                          launcher=SimpleNamespace(disk_classes=lambda offers: classes,
                                                                   failure_domains=lambda: {"node-1": "node-1"}),
                                          store=SimpleNamespace(running_members=lambda cluster_id: []))
    with_mesos = TestClient(app)
    plan = with_mesos.post("/placements/dry-run", headers=SERVICE, json={
        "cluster_id": "c1", "members": [worker(1, disks={"ssd": 1}, container={"image": "x"})]}).json()
    assert plan["members"] == [{"member_id": "w1", "node": "node-1", "disks": ["/disks/d1"], "cpus": []}]
    full = with_mesos.post("/placements/dry-run", headers=SERVICE, json={
        "cluster_id": "c1", "members": [worker(1, cpus=2, disks={})]}).json()
    assert full["reasons"][0]["nodes"] == [{"node": "node-1", "constraint": "cpus",
                                            "message": "needs 2.05 cpus, 2 free"}]
    assert held.cpus == 2.0 and len(held.disks) == 2, "the held offer is untouched"


def test_on_the_mesos_offers_the_clusters_running_members_count():
    from types import SimpleNamespace

    from spindle_scheduler.mesos.offers import ParsedOffer

    app = build_app(Settings(internal_token="t"))
    here = SimpleNamespace(member_id="w1", cluster_id="c1", hostname="node-1", request={"role": "worker"})
    app.state.framework = SimpleNamespace(
        last_offers={"node-1": ParsedOffer("o-1", "a-1", "node-1", cpus=8.0, mem_mb=8192.0, disks=[])},
        platform_nodes=lambda: {"node-1"},
        launcher=SimpleNamespace(disk_classes=lambda offers: {}, failure_domains=lambda: {}),
        store=SimpleNamespace(running_members=lambda cluster_id: [here] if cluster_id == "c1" else []))
    with_mesos = TestClient(app)
    replacement = {"cluster_id": "c1", "anti_affinity_roles": ["worker"], "members": [worker(2, disks={})]}
    refused = with_mesos.post("/placements/dry-run", headers=SERVICE, json=replacement).json()
    assert refused["reasons"][0]["nodes"][0]["constraint"] == "anti_affinity"
    again = with_mesos.post("/placements/dry-run", headers=SERVICE,
                            json={**replacement, "members": [worker(1, disks={})]}).json()
    assert again["placeable"], "a member named in the body is placed anew, not counted as running"
