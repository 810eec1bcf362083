"""Quotas through the public API (fresh database, real orchestrator API): your usage against your
quota, admins set and list quotas, users cannot, unknown users are 404, bad limits 422, and a launch
over a limit is 403 QUOTA_EXCEEDED naming it."""
import pytest

from tests.integration.api.conftest import bearer

SMALL = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0}}}}


def test_a_user_sees_their_usage_against_the_default_quota(api, make_user):
    alice = make_user("alice")
    assert api.post("/products/static-web/1.0", json=SMALL, headers=bearer(alice)).status_code == 202
    quota = api.get("/me/quota", headers=bearer(alice))
    assert quota.status_code == 200, quota.text
    body = quota.json()
    assert body["username"] == "alice" and body["limits"]["floating_ips"] == 32 and body["limits"]["clusters"] == 10
    assert body["usage"] == {"clusters": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0, "ssd": 0, "nvme": 0},
                             "floating_ips": 1}
    assert "cpus" in body["defaults"]
    assert api.get("/me/quota").status_code == 401


def test_admins_set_a_users_quota_and_launches_over_it_are_refused(api, make_user):
    admin, alice, bob = make_user("root-admin", is_admin=True), make_user("alice"), make_user("bob")
    put = api.put("/admin/users/alice/quota", json={"floating_ips": 1, "disks": {"ssd": 2}}, headers=bearer(admin))
    assert put.status_code == 200, put.text
    assert put.json()["limits"]["floating_ips"] == 1 and put.json()["limits"]["disks"]["ssd"] == 2
    assert api.get("/admin/users/alice/quota", headers=bearer(admin)).json()["limits"]["floating_ips"] == 1
    assert [q["username"] for q in api.get("/admin/quotas", headers=bearer(admin)).json()] == ["alice"]
    assert api.post("/products/static-web/1.0", json=SMALL, headers=bearer(alice)).status_code == 202
    plan = api.post("/products/static-web/1.0/plan", json=SMALL, headers=bearer(alice))
    assert plan.status_code == 403 and plan.json()["error"]["code"] == "QUOTA_EXCEEDED"
    refused = api.post("/products/static-web/1.0", json=SMALL, headers=bearer(alice))
    assert refused.status_code == 403
    error = refused.json()["error"]
    assert error["code"] == "QUOTA_EXCEEDED" and error["details"]["limit"] == "floating_ips"
    assert (error["details"]["quota"], error["details"]["usage"], error["details"]["requested"]) == (1, 1, 1)
    assert len(api.get("/clusters/alice", headers=bearer(alice)).json()["items"]) == 1, "nothing was created"
    assert api.post("/products/static-web/1.0", json=SMALL, headers=bearer(bob)).status_code == 202


@pytest.mark.parametrize(("method", "path"), [("GET", "/admin/quotas"), ("GET", "/admin/users/alice/quota"),
                                              ("PUT", "/admin/users/alice/quota")])
def test_users_cannot_see_or_set_quotas_of_others_or_their_own(api, make_user, method, path):
    alice = make_user("alice")
    response = api.request(method, path, json={"floating_ips": 1000}, headers=bearer(alice))
    assert response.status_code == 403 and response.json()["error"]["code"] == "FORBIDDEN"
    assert api.get("/me/quota", headers=bearer(alice)).json()["limits"]["floating_ips"] == 32


@pytest.mark.parametrize(("body", "status"), [({"cpus": -1}, 422), ({"floating_ips": 2**31}, 422),
                                              ({"disks": {"tape": 1}}, 422), ({"ram": 1}, 422),
                                              ({"cpus": "lots"}, 422), ([1], 422)])
def test_bad_limits_are_refused_and_change_nothing(api, make_user, body, status):
    admin = make_user("root-admin", is_admin=True)
    make_user("alice")
    response = api.put("/admin/users/alice/quota", json=body, headers=bearer(admin))
    assert response.status_code == status and response.json()["error"]["code"] == "VALIDATION_FAILED"
    assert api.get("/admin/users/alice/quota", headers=bearer(admin)).json()["defaults"] != []


def test_unknown_users_are_404(api, make_user):
    admin = make_user("root-admin", is_admin=True)
    for method in ("GET", "PUT"):
        response = api.request(method, "/admin/users/nobody-here/quota", json={}, headers=bearer(admin))
        assert response.status_code == 404 and response.json()["error"]["code"] == "USER_NOT_FOUND"
    assert api.get("/admin/users/NOT_A_NAME/quota", headers=bearer(admin)).status_code == 422
