"""Bindings on a fresh database (worker not running): a Spark cluster bound to an HDFS cluster of the
same owner is accepted only while that cluster runs; another owner's cluster is "not found", a cluster
of the wrong product is a 422, and nothing is created by a refused launch. The bound cluster's members
reach each other's (peer sets both ways) and the templates see the bound NameNode; another owner's
clusters and destroyed ones are out."""
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from spindle_common import migrations
from spindle_common.catalog import load_catalog
from spindle_common.db import session_factory
from spindle_orchestrator import bindings, peers
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.job_runner import driver_command, driver_context
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster, Job, Member
from tests.support.internal import internal_headers

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")
NO_POOL = peers.PoolFacts([], [])


@pytest.fixture
def db(fresh_database):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    return fresh_database


@pytest.fixture
def api(db):
    return TestClient(build_app(Settings(database_url=db, internal_token=TOKEN)))


def launch(api, owner, product, version, options=None):
    return api.post("/clusters", headers=AS_API, json={
        "owner": owner, "owner_id": owner, "product": product, "version": version, "options": options or {}})


def running(db, cluster_id, ips):
    """The cluster RUNNING with members at ``ips`` (role → list of IPs), as the worker would record it."""
    with session_factory(db)() as session:
        cluster = session.get(Cluster, cluster_id)
        cluster.state = "RUNNING"
        for role, addresses in ips.items():
            for index, ip in enumerate(addresses, start=1):
                session.add(Member(member_id=f"{cluster_id}-{role}-{index}", cluster_id=cluster_id, role=role,
                                   index=index, state="TASK_RUNNING", spec={}, ip=ip, node=f"node-{index}",
                                   message="", disks=[], ports=[]))
        session.commit()


def count(db):
    with session_factory(db)() as session:
        return len(session.scalars(select(Cluster)).all())


def test_a_binding_needs_a_running_cluster_of_the_owner_and_the_declared_product(api, db):
    hdfs = launch(api, "u1", "hadoop", "3.3").json()["id"]
    web = launch(api, "u1", "static-web", "1.0").json()["id"]
    theirs = launch(api, "u2", "hadoop", "3.3").json()["id"]
    before = count(db)
    refused = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": hdfs}})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "BOUND_CLUSTER_NOT_RUNNING"
    running(db, hdfs, {"namenode": ["10.9.0.2"], "datanode": ["10.9.0.3", "10.9.0.4"]})
    running(db, theirs, {"namenode": ["10.9.1.2"]})
    running(db, web, {"server": ["10.9.0.9"]})
    for target, status, code in [(theirs, 404, "BOUND_CLUSTER_NOT_FOUND"),
                                 ("c0000000000", 404, "BOUND_CLUSTER_NOT_FOUND"), (web, 422, "INVALID_OPTIONS")]:
        refused = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": target}})
        assert (refused.status_code, refused.json()["error"]["code"]) == (status, code), refused.text
    assert count(db) == before, "a refused launch creates nothing"
    accepted = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": hdfs}})
    assert accepted.status_code == 202, accepted.text
    assert api.delete(f"/clusters/{hdfs}", headers=AS_API, params={"force": "true"}).status_code == 202
    refused = launch(api, "u1", "engine", "1.0", {"bind": {"hdfs": hdfs}})
    assert refused.status_code == 409, "a cluster being deleted is no binding target"


def test_bound_clusters_reach_each_other_and_templates_see_the_namenode(api, db):
    hdfs = launch(api, "u1", "hadoop", "3.3").json()["id"]
    running(db, hdfs, {"namenode": ["10.9.0.2"], "datanode": ["10.9.0.3", "10.9.0.4"]})
    other = launch(api, "u2", "hadoop", "3.3").json()["id"]
    running(db, other, {"namenode": ["10.9.1.2"]})
    unbound = launch(api, "u1", "spark", "3.5").json()["id"]
    running(db, unbound, {"master": ["10.9.0.20"]})
    spark = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": hdfs}}).json()["id"]
    running(db, spark, {"master": ["10.9.0.10"], "worker": ["10.9.0.11"]})
    catalog = load_catalog("catalog")
    with session_factory(db)() as session:
        session.add(Job(id="j1", cluster_id=spark, owner="u1", state="RUNNING", main="wc.py", args=[], ip="10.9.0.12"))
        session.commit()
        hdfs_peers = peers.peer_set(session, hdfs, NO_POOL).peers
        assert hdfs_peers == ["10.9.0.10", "10.9.0.11", "10.9.0.12", "10.9.0.2", "10.9.0.3", "10.9.0.4"]
        assert peers.peer_set(session, spark, NO_POOL).peers == hdfs_peers
        assert peers.peer_set(session, unbound, NO_POOL).peers == ["10.9.0.20"]
        assert peers.peer_set(session, other, NO_POOL).peers == ["10.9.1.2"]

        manifest = catalog.get("spark", "3.5")
        cluster = session.get(Cluster, spark)
        context = driver_context(cluster, session.get(Job, "j1"), "10.9.0.12",
                                 bindings.context(session, manifest, cluster.options))
        assert "spark.hadoop.fs.defaultFS=hdfs://10.9.0.2:8020" in driver_command(manifest, context, [])
        engine = catalog.get("engine", "1.0")
        bound = bindings.context(session, engine, {"bind": {"hdfs": hdfs}})
        assert bound["hdfs"]["peers"]["datanode"][1] == {"id": f"{hdfs}-datanode-2", "name": "datanode-2",
                                                         "ip": "10.9.0.4", "node": "node-2"}
        assert bindings.context(session, engine, {}) == {"hdfs": None}
        unbound_context = driver_context(session.get(Cluster, unbound), session.get(Job, "j1"), "10.9.0.21",
                                         bindings.context(session, manifest, {}))
        assert "spark.hadoop.fs.defaultFS=file:///" in driver_command(manifest, unbound_context, [])

    api.delete(f"/clusters/{spark}", headers=AS_API)
    with session_factory(db)() as session:
        assert peers.peer_set(session, hdfs, NO_POOL).peers == ["10.9.0.2", "10.9.0.3", "10.9.0.4"], \
            "a cluster being deleted is no peer of the cluster it bound"
    api.delete(f"/clusters/{hdfs}", headers=AS_API)
    with session_factory(db)() as session, pytest.raises(bindings.BindingGone):
        bindings.context(session, engine, {"bind": {"hdfs": hdfs}})  # a launch or driver after it: fails


def test_a_cluster_others_are_bound_to_is_deleted_only_with_force_and_they_are_told(api, db):
    """DELETE of a cluster live clusters bind: 409 CLUSTER_IN_USE naming each (cluster, product,
    binding) and nothing changes; the owner's other clusters, another owner's and a binder being
    deleted do not count; with force it goes, and each binder's view and timeline say BINDING_GONE."""
    hdfs = launch(api, "u1", "hadoop", "3.3").json()["id"]
    running(db, hdfs, {"namenode": ["10.9.0.2"], "datanode": ["10.9.0.3"]})
    spark = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": hdfs}}).json()["id"]
    engine = launch(api, "u1", "engine", "1.0", {"bind": {"hdfs": hdfs}}).json()["id"]
    small = {"worker": {"count": 1, "disks": {"hdd": 0}}}
    gone = launch(api, "u1", "spark", "3.5", {"bind": {"hdfs": hdfs}, "roles": small}).json()["id"]
    assert api.delete(f"/clusters/{gone}", headers=AS_API).status_code == 202  # being deleted: binds nothing
    assert launch(api, "u1", "spark", "3.5", {"roles": small}).status_code == 202  # unbound
    assert launch(api, "u2", "hadoop", "3.3").status_code == 202  # another owner's

    refused = api.delete(f"/clusters/{hdfs}", headers=AS_API)
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "CLUSTER_IN_USE"
    assert sorted(error["details"]["bound_by"], key=lambda b: b["cluster_id"]) == sorted(
        [{"cluster_id": spark, "product": "spark", "binding": "hdfs"},
         {"cluster_id": engine, "product": "engine", "binding": "hdfs"}], key=lambda b: b["cluster_id"])
    assert spark in error["message"] and engine in error["message"] and gone not in error["message"]
    view = api.get(f"/clusters/{hdfs}", headers=AS_API).json()
    assert (view["state"], [n["code"] for n in view["notices"]]) == ("RUNNING", ["NO_STANDBY_NAMENODE"])
    states = [e["state"] for e in api.get(f"/clusters/{hdfs}/events", headers=AS_API).json()]
    assert "DELETE_REQUESTED" not in states, "a refused delete changes nothing"

    assert api.delete(f"/clusters/{hdfs}", headers=AS_API, params={"force": "true"}).status_code == 202
    for binder in (spark, engine):
        notices = api.get(f"/clusters/{binder}", headers=AS_API).json()["notices"]
        assert [(n["code"], n["message"]) for n in notices] == [
            ("BINDING_GONE", f"bind.hdfs: cluster {hdfs} was deleted (force); this cluster runs on without it")]
        events = api.get(f"/clusters/{binder}/events", headers=AS_API).json()
        assert [e["message"] for e in events if e["state"] == "BINDING_GONE"] == [notices[0]["message"]]
    assert api.get(f"/clusters/{gone}", headers=AS_API).json()["notices"] == []
    again = api.delete(f"/clusters/{hdfs}", headers=AS_API)
    assert again.status_code == 202, "a repeat of a delete under way changes nothing (and is not refused)"
    assert len(api.get(f"/clusters/{spark}", headers=AS_API).json()["notices"]) == 1
