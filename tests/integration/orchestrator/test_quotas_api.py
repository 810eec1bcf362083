"""The orchestrator's quotas on a fresh database (worker not running): a launch over a limit is
403 QUOTA_EXCEEDED and creates nothing, waiting clusters and unfinished jobs' drivers count, a
destroyed cluster gives its share back, admins' limits replace the defaults, and parallel launches
of one owner cannot overshoot."""
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster, Job
from tests.support.internal import internal_headers
from tests.support.live_server import serve
from tests.support.race import race

TOKEN = "test-token"
AS_API = internal_headers(TOKEN, "api-server", "service")
SMALL = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64}}}


@pytest.fixture
def app(fresh_database):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    return build_app(Settings(database_url=fresh_database, internal_token=TOKEN))


@pytest.fixture
def api(app):
    return TestClient(app)


def launch(api, owner="u1", options=None, key=None, product="static-web"):
    return api.post("/clusters", headers=AS_API, json={
        "owner": owner, "owner_id": owner, "product": product, "version": "1.0", "options": options or SMALL,
        "idempotency_key": key})


def set_quota(api, owner, **limits):
    response = api.put(f"/quotas/{owner}", headers=AS_API, json=limits)
    assert response.status_code == 200, response.text
    return response.json()


def test_defaults_apply_until_an_admin_sets_limits(api):
    quota = api.get("/quotas/u1", headers=AS_API).json()
    assert quota["limits"] == {"clusters": 10, "cpus": 32.0, "mem_mb": 65536,
                               "disks": {"hdd": 16, "ssd": 16, "nvme": 16}, "floating_ips": 32}
    assert quota["usage"]["clusters"] == 0 and "floating_ips" in quota["defaults"]
    assert api.get("/quotas", headers=AS_API).json() == [], "users on the defaults are not listed"
    quota = set_quota(api, "u1", floating_ips=3, disks={"ssd": 0})
    assert quota["limits"]["floating_ips"] == 3 and quota["limits"]["disks"] == {"hdd": 16, "ssd": 0, "nvme": 16}
    assert "floating_ips" not in quota["defaults"] and "disks.ssd" not in quota["defaults"]
    assert [q["owner"] for q in api.get("/quotas", headers=AS_API).json()] == ["u1"]
    assert set_quota(api, "u1")["limits"]["floating_ips"] == 32, "a limit left out is the default again"


@pytest.mark.parametrize("body", [{"cpus": -1}, {"floating_ips": 2**31}, {"disks": {"tape": 1}}, {"ram": 4},
                                  {"clusters": "many"}, {"disks": {"hdd": -1}}])
def test_bad_limits_are_422_and_change_nothing(api, body):
    response = api.put("/quotas/u1", headers=AS_API, json=body)
    assert response.status_code == 422 and response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert api.get("/quotas/u1", headers=AS_API).json()["limits"]["floating_ips"] == 32


def test_a_launch_over_the_ip_quota_is_refused_naming_the_limit_and_creates_nothing(api, fresh_database):
    set_quota(api, "u1", floating_ips=2)
    first, second = launch(api), launch(api, options={**SMALL, "wait_for_resources": True})
    assert (first.status_code, second.status_code) == (202, 202)
    refused = launch(api)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "QUOTA_EXCEEDED" and "floating_ips" in error["message"]
    assert {k: error["details"][k] for k in ("limit", "quota", "usage", "requested")} == {
        "limit": "floating_ips", "quota": 2, "usage": 2, "requested": 1}
    owned = api.get("/clusters", headers=AS_API, params={"owner_id": "u1"}).json()["items"]
    assert len(owned) == 2, "nothing was created"
    assert launch(api, owner="u2").status_code == 202, "another user still launches"
    plan = api.post("/quotas/u1/check", headers=AS_API, json={"product": "static-web", "version": "1.0",
                                                              "options": SMALL})
    assert plan.status_code == 403 and plan.json()["error"]["details"]["limit"] == "floating_ips"
    # a destroyed cluster gives its share back; a cleaned-up failed one too; a waiting one does not
    with session_factory(fresh_database)() as session, session.begin():
        session.execute(update(Cluster).where(Cluster.id == first.json()["id"]).values(state="DESTROYED"))
        session.execute(update(Cluster).where(Cluster.id == second.json()["id"]).values(state="QUEUED"))
    usage = api.get("/quotas/u1", headers=AS_API).json()["usage"]
    assert usage == {"clusters": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 1, "ssd": 0, "nvme": 0},
                     "floating_ips": 1}
    assert launch(api).status_code == 202


def test_disks_and_cpus_of_every_member_count(api):
    set_quota(api, "u1", cpus=1.0, disks={"hdd": 3})
    three = {"roles": {"server": {"count": 3, "cpus": 0.25, "disks": {"hdd": 1}}}}
    assert launch(api, options=three).status_code == 202
    refused = launch(api, options={"roles": {"server": {"count": 1, "cpus": 0.5, "disks": {"hdd": 1}}}})
    assert refused.status_code == 403
    assert [e["limit"] for e in refused.json()["error"]["details"]["exceeded"]] == ["cpus", "disks.hdd"]
    usage = api.get("/quotas/u1", headers=AS_API).json()["usage"]
    assert (usage["cpus"], usage["disks"]["hdd"], usage["floating_ips"]) == (0.75, 3, 3)


def test_a_repeated_idempotency_key_at_full_quota_gives_the_same_cluster(api):
    set_quota(api, "u1", clusters=1)
    first = launch(api, key="k")
    again = launch(api, key="k")
    assert (first.status_code, again.status_code) == (202, 200) and again.json()["id"] == first.json()["id"]
    assert launch(api, key="other").status_code == 403


def test_unfinished_job_drivers_hold_an_ip_each(api, fresh_database):
    set_quota(api, "u1", floating_ips=2)
    cluster = launch(api).json()
    with session_factory(fresh_database)() as session, session.begin():
        session.execute(update(Cluster).where(Cluster.id == cluster["id"]).values(state="RUNNING"))
    job = {"owner": "u1", "main": "m.py", "files": {"m.py": "cHJpbnQoMSk="}}
    assert api.post(f"/clusters/{cluster['id']}/jobs", headers=AS_API, json=job).status_code == 202
    refused = api.post(f"/clusters/{cluster['id']}/jobs", headers=AS_API, json=job)
    assert refused.status_code == 403 and refused.json()["error"]["details"]["limit"] == "floating_ips"
    assert len(api.get(f"/clusters/{cluster['id']}/jobs", headers=AS_API).json()) == 1
    with session_factory(fresh_database)() as session, session.begin():
        session.execute(update(Job).values(state="SUCCEEDED"))
    assert api.get("/quotas/u1", headers=AS_API).json()["usage"]["floating_ips"] == 1


def test_unknown_products_are_404_and_create_nothing(api):
    response = launch(api, product="flink")
    assert response.status_code == 404 and response.json()["error"]["code"] == "PRODUCT_NOT_FOUND"
    assert api.get("/quotas/u1", headers=AS_API).json()["usage"]["clusters"] == 0


def test_parallel_launches_of_one_owner_cannot_overshoot(app, api):
    set_quota(api, "u1", clusters=2)
    with serve(app) as url:
        answers = race(url, 6, lambda client, i: client.post("/clusters", headers=AS_API, json={
            "owner": "u1", "owner_id": "u1", "product": "static-web", "version": "1.0", "options": SMALL}))
    assert sorted(a.status_code for a in answers) == [202, 202, 403, 403, 403, 403]
    assert api.get("/quotas/u1", headers=AS_API).json()["usage"]["clusters"] == 2
    assert len(api.get("/clusters", headers=AS_API, params={"owner_id": "u1"}).json()["items"]) == 2
