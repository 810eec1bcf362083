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
    assert relaxed.status_code == 202 and relaxed.json()["notices"] == [], "the user let them share nodes"

    fits = launch(api, {"roles": {"datanode": {"count": 2}}})
    assert fits.status_code == 202 and fits.json()["notices"] == []
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
    [notice] = cluster["notices"]
    assert notice["code"] == "REPLICAS_SHARE_A_NODE"
    assert "3 datanode members" in notice["message"] and "its loss loses every copy" in notice["message"]
    events = api.get(f"/clusters/{cluster['id']}/events", headers=AS_API).json()
    assert [e["message"] for e in events if e["state"] == "REPLICAS_SHARE_A_NODE"] == [notice["message"]]
    single = launch(api, {"roles": {"datanode": {"count": 1}}})
    assert single.json()["notices"] == [], "one DataNode shares with no other"
    nodes.clear()  # the scheduler not answering with nodes: nothing is said or refused
    unknown = launch(api, {"roles": {"datanode": {"count": 2, "disks": {"hdd": 1}}}})
    assert (unknown.status_code, unknown.json()["notices"]) == (202, []), unknown.text
