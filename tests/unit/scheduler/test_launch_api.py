"""POST /launches keeps the cluster's placement options with each task (a member relaunched later is
placed by them too); bad ones are a 422 (fake store and driver: no database, no Mesos)."""
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient

from spindle_scheduler.core.config import Settings
from spindle_scheduler.main import build_app
from tests.support.internal import internal_headers

SERVICE = internal_headers("t", "orchestrator", "service")


@pytest.fixture
def launched():
    """A client of an app whose store keeps what it is given (returned as the second value)."""
    added: list = []
    app = build_app(Settings(internal_token="t"))
    app.state.framework = SimpleNamespace(store=SimpleNamespace(by_cluster=lambda cluster_id: [], add=added.extend),
                                          revive=lambda driver: None)
    app.state.driver = SimpleNamespace()
    return TestClient(app), added


def spec(**placement):
    members = [{"member_id": f"c1-worker-{i}", "role": "worker", "cpus": 1, "mem_mb": 512,
                "container": {"image": "x"}} for i in (1, 2)]
    return {"cluster_id": "c1", "members": members, **placement}


def test_each_task_keeps_the_placement_options(launched):
    client, added = launched
    r = client.post("/launches", headers=SERVICE, json=spec(
        strategy="pack", preferred_hosts=["n1"], anti_affinity_roles=["worker"], excluded_hosts=["n2", "n3"]))
    assert r.status_code == 202, r.json()
    assert [{k: t.request[k] for k in ("strategy", "preferred_hosts", "anti_affinity_roles", "excluded_hosts")}
            for t in added] == [{"strategy": "pack", "preferred_hosts": ["n1"], "anti_affinity_roles": ["worker"],
                                 "excluded_hosts": ["n2", "n3"]}] * 2


def test_without_options_the_defaults_are_kept(launched):
    client, added = launched
    assert client.post("/launches", headers=SERVICE, json=spec()).status_code == 202
    assert {(t.request["strategy"], tuple(t.request["anti_affinity_roles"]), tuple(t.request["excluded_hosts"]))
            for t in added} == {("spread", (), ())}


@pytest.mark.parametrize("placement,field", [
    ({"strategy": "random"}, "body.strategy"),
    ({"excluded_hosts": [""]}, "body.excluded_hosts.0"),
    ({"excluded_hosts": "n1"}, "body.excluded_hosts"),
    ({"anti_affinity_roles": [{"role": "worker"}]}, "body.anti_affinity_roles.0"),
    ({"preferred_hosts": ["n" * 256]}, "body.preferred_hosts.0"),
])
def test_bad_placement_options_are_a_422(launched, placement, field):
    client, added = launched
    r = client.post("/launches", headers=SERVICE, json=spec(**placement))
    assert r.status_code == 422 and field in [e["field"] for e in r.json()["error"]["details"]["errors"]]
    assert added == []
