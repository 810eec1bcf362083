"""Replicas apart at the orchestrator (a fresh database, the worker not running; the platform's nodes
as the scheduler's ``GET /nodes`` would list them): a launch or resize with more members of a replica
role than nodes is refused with a 422 naming the role, the count and the nodes, and creates or changes
nothing; on a one-node platform it is accepted and the cluster says its replicas share the node (its
view's notices and its timeline)."""
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from spindle_common import migrations
from spindle_common.catalog import load_catalog, validate_options
from spindle_common.db import session_factory
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster
from tests.support.internal import internal_headers

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")


@pytest.fixture
def platform(fresh_database):
    """The orchestrator's API and the nodes its scheduler reports (a list the test changes)."""
    migrations.upgrade("spindle_orchestrator", fresh_database)
    app = build_app(Settings(database_url=fresh_database, internal_token=TOKEN))
    nodes: list[str] = []
    app.state.scheduler = SimpleNamespace(nodes=lambda: list(nodes))
    return TestClient(app), nodes, fresh_database


def launch(api, options):
    """As the api-server launches: the options resolved (placement.replicas_apart: ["datanode"])."""
    resolved = validate_options(load_catalog("catalog").get("hadoop", "3.3"), options)
    return api.post("/clusters", headers=AS_API, json={"owner": "u1", "owner_id": "u1", "product": "hadoop",
                                                       "version": "3.3", "options": resolved})


NO_STANDBY = "NO_STANDBY_NAMENODE"  # HDFS on fewer than 3 nodes: one NameNode (settings.ha decided off)


def codes(view: dict) -> list[str]:
    return [n["code"] for n in view["notices"]]


def clusters(db):
    with session_factory(db)() as session:
        return session.query(Cluster).count()


def test_more_replicas_than_nodes_is_refused_naming_role_count_and_nodes(platform):
    api, nodes, db = platform
    nodes[:] = ["n1", "n2"]
    refused = launch(api, {"roles": {"datanode": {"count": 3}}})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]) == ("REPLICAS_CANNOT_BE_APART",
                                                 {"role": "datanode", "count": 3, "nodes": ["n1", "n2"]})
    assert "role datanode: 3 members" in error["message"] and "(n1, n2)" in error["message"]
    assert clusters(db) == 0, "a refused launch creates nothing"
    excluded = launch(api, {"roles": {"datanode": {"count": 2}}, "placement": {"excluded_nodes": ["n2"]}})
    assert (excluded.status_code, excluded.json()["error"]["details"]["nodes"]) == (422, ["n1"])
    relaxed = launch(api, {"roles": {"datanode": {"count": 3}}, "placement": {"replicas_apart": []}})
    assert relaxed.status_code == 202 and codes(relaxed.json()) == [NO_STANDBY], "the user let them share nodes"
    assert relaxed.json()["options"]["settings"]["ha"] is False, "decided for two nodes"

    fits = launch(api, {"roles": {"datanode": {"count": 2}}})
    assert fits.status_code == 202 and codes(fits.json()) == [NO_STANDBY]
    cluster_id = fits.json()["id"]
    with session_factory(db)() as session:
        session.get(Cluster, cluster_id).state = "RUNNING"
        session.commit()
    grown = api.post(f"/clusters/{cluster_id}/resize", headers=AS_API, json={"roles": {"datanode": 3}})
    assert (grown.status_code, grown.json()["error"]["code"]) == (422, "REPLICAS_CANNOT_BE_APART")
    view = api.get(f"/clusters/{cluster_id}", headers=AS_API).json()
    assert (view["state"], view["options"]["roles"]["datanode"]["count"]) == ("RUNNING", 2), "nothing changed"
    nodes.append("n3")
    assert api.post(f"/clusters/{cluster_id}/resize", headers=AS_API,
                    json={"roles": {"datanode": 3}}).status_code == 202


def test_on_a_one_node_platform_replicas_share_it_and_the_cluster_says_so(platform):
    api, nodes, _ = platform
    nodes[:] = ["local"]
    accepted = launch(api, {"roles": {"datanode": {"count": 3}}})
    assert accepted.status_code == 202, accepted.text
    cluster = accepted.json()
    [no_standby, notice] = cluster["notices"]
    assert (no_standby["code"], notice["code"]) == (NO_STANDBY, "REPLICAS_SHARE_A_NODE")
    assert "no standby" in no_standby["message"]
    assert "3 datanode members" in notice["message"] and "its loss loses every copy" in notice["message"]
    events = api.get(f"/clusters/{cluster['id']}/events", headers=AS_API).json()
    assert [e["message"] for e in events if e["state"] == "REPLICAS_SHARE_A_NODE"] == [notice["message"]]
    single = launch(api, {"roles": {"datanode": {"count": 1}}})
    assert codes(single.json()) == [NO_STANDBY], "one DataNode shares with no other"
    nodes.clear()  # the scheduler not answering with nodes: nothing is said or refused
    unknown = launch(api, {"roles": {"datanode": {"count": 2, "disks": {"hdd": 1}}}})
    assert (unknown.status_code, codes(unknown.json())) == (202, [NO_STANDBY]), unknown.text


def test_hdfs_on_three_nodes_has_high_availability_unless_asked_not_to(platform):
    """settings.ha left out is decided by the platform's nodes at the launch: on with three (two
    NameNodes and three journal members, all apart), off with fewer (a notice says there is no
    standby); a launch saying it keeps its choice."""
    api, nodes, _ = platform
    nodes[:] = ["n1", "n2", "n3"]
    small = {"datanode": {"disks": {"hdd": 1}}}  # both within the owner's quota of 16 disks
    ha = launch(api, {"roles": small}).json()
    assert (ha["options"]["settings"]["ha"], codes(ha)) == (True, [])
    off = launch(api, {"roles": small, "settings": {"ha": False}}).json()
    assert (off["options"]["settings"]["ha"], codes(off)) == (False, [NO_STANDBY])
    nodes[:] = ["n1", "n2"]
    refused = launch(api, {"settings": {"ha": True}, "roles": {"datanode": {"count": 2}}})
    assert (refused.status_code, refused.json()["error"]["details"]) == (
        422, {"role": "journalnode", "count": 3, "nodes": ["n1", "n2"]}), refused.text
