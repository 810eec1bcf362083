"""Quotas against the running platform: one user launching cluster after cluster to exhaust the
floating-IP pool is stopped by their IP quota with a clear 403 while another user still launches;
the defaults alone keep one user from the whole pool; a waiting cluster counts; only admins set
quotas (a user cannot raise their own); parallel launches cannot overshoot a quota. Clusters are
small (static-web, one member, 0.1 cpu, no disk) and every one is deleted at the end."""
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from spindle_client.client import SpindleClient, SpindleError
from tests.integration.platform.cluster_checks import wait_settled
from tests.support.live_users import API_URL, live_user
from tests.support.race import race

SMALL = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0}}}}


@pytest.fixture
def admin(database_url) -> Iterator[SpindleClient]:
    with live_user(database_url, "qadmin", is_admin=True) as client:
        yield client


@contextmanager
def cleaned_up(*users: SpindleClient) -> Iterator[None]:
    """Every cluster of ``users`` is deleted afterwards and must reach DESTROYED (its IPs given back)."""
    try:
        yield
    finally:
        for user in users:
            left = [c for c in user.clusters(user.username) if c["state"] != "DESTROYED"]
            for cluster in left:
                user.delete(cluster)
            for cluster in left:
                wait_settled(user, cluster, ("DESTROYED",), timeout=240)


def refusal(call) -> SpindleError:
    with pytest.raises(SpindleError) as refused:
        call()
    return refused.value


def test_one_user_is_stopped_by_the_ip_quota_and_another_still_launches(database_url, admin):
    with live_user(database_url, "greedy") as greedy, live_user(database_url, "other") as other, \
            cleaned_up(greedy, other):
        quota = greedy.quota()
        pool = next(p for p in admin._call("GET", "/admin/ip-pools") if p["name"] == "default")
        assert "floating_ips" in quota.defaults and quota.limits.floating_ips < pool["floating_total"], \
            "the default IP quota alone keeps one user from the whole pool"
        admin.set_quota(greedy.username, {"floating_ips": 3})
        accepted, error = [], None
        for _ in range(10):  # bounded: launch until refused
            try:
                accepted.append(greedy.launch("static-web", "1.0", SMALL))
            except SpindleError as exc:
                error = exc
                break
        assert len(accepted) == 3 and error is not None, f"{len(accepted)} launches passed an IP quota of 3"
        assert (error.status, error.code) == (403, "QUOTA_EXCEEDED")
        assert "floating_ips" in error.message
        assert {k: error.details[k] for k in ("limit", "quota", "usage", "requested")} == {
            "limit": "floating_ips", "quota": 3, "usage": 3, "requested": 1}
        assert len(list(greedy.clusters(greedy.username))) == 3, "the refused launch created nothing"
        usage = greedy.quota().usage
        assert (usage.clusters, usage.floating_ips) == (3, 3)
        plan = refusal(lambda: greedy.plan("static-web", "1.0", SMALL))
        assert (plan.status, plan.code, plan.details["limit"]) == (403, "QUOTA_EXCEEDED", "floating_ips")
        assert other.launch("static-web", "1.0", SMALL)["state"] == "PENDING", "another user still launches"
        greedy.delete(accepted[0])
        wait_settled(greedy, accepted[0], ("DESTROYED",), timeout=240)
        assert greedy.quota().usage.floating_ips == 2, "a destroyed cluster gives its IP back"
        assert greedy.launch("static-web", "1.0", SMALL)["state"] == "PENDING"


def test_a_cluster_waiting_for_resources_counts(database_url, admin):
    with live_user(database_url, "waiter") as user, cleaned_up(user):
        admin.set_quota(user.username, {"cpus": 5})
        # More cpus than this machine's node offers: it waits (QUEUED), holding its share of the quota.
        waiting = user.launch("static-web", "1.0", {"wait_for_resources": True,
                                                    "roles": {"server": {"count": 1, "cpus": 4, "mem_mb": 64,
                                                                         "disks": {"hdd": 0}}}})
        waiting = wait_settled(user, waiting, ("QUEUED", "RUNNING", "FAILED"), timeout=120)
        assert waiting["state"] == "QUEUED", waiting
        refused = refusal(lambda: user.launch("static-web", "1.0", {
            "roles": {"server": {"count": 2, "cpus": 0.75, "mem_mb": 64, "disks": {"hdd": 0}}}}))
        assert (refused.status, refused.code) == (403, "QUOTA_EXCEEDED")
        assert {k: refused.details[k] for k in ("limit", "quota", "usage", "requested")} == {
            "limit": "cpus", "quota": 5, "usage": 4, "requested": 1.5}
        assert user.quota().usage.clusters == 1


def test_only_admins_set_quotas(database_url, admin):
    with live_user(database_url, "selfish") as user:
        before = user.quota()
        for method, path in (("PUT", f"/admin/users/{user.username}/quota"), ("GET", "/admin/quotas"),
                             ("GET", f"/admin/users/{admin.username}/quota")):
            error = refusal(lambda m=method, p=path: user._call(m, p, json={"floating_ips": 100000, "cpus": 1e6}))
            assert (error.status, error.code) == (403, "FORBIDDEN"), (method, path)
        error = refusal(lambda: user._call("PUT", "/me/quota", json={"floating_ips": 100000}))
        assert error.status == 405
        assert user.quota() == before, "nothing changed"
        assert admin.set_quota(user.username, {"clusters": 1}).limits.clusters == 1
        assert user.quota().limits.clusters == 1 and "clusters" not in user.quota().defaults
        assert any(q.username == user.username for q in admin.quotas())
        missing = refusal(lambda: admin.quota("no-such-user-q"))
        assert (missing.status, missing.code) == (404, "USER_NOT_FOUND")
        bad = refusal(lambda: admin.set_quota(user.username, {"floating_ips": -1}))
        assert (bad.status, bad.code) == (422, "VALIDATION_FAILED")
        assert user.quota().limits.clusters == 1


def test_parallel_launches_cannot_overshoot_the_quota(database_url, admin):
    with live_user(database_url, "racer") as user, cleaned_up(user):
        admin.set_quota(user.username, {"clusters": 2})
        headers = {"Authorization": f"Bearer {user.token}"}
        answers = race(API_URL, 6, lambda client, i: client.post("/products/static-web/1.0", json=SMALL,
                                                                 headers=headers))
        assert sorted(a.status_code for a in answers) == [202, 202, 403, 403, 403, 403], \
            [a.text[:200] for a in answers]
        assert all(a.json()["error"]["details"]["limit"] == "clusters" for a in answers if a.status_code == 403)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and user.quota().usage.clusters != 2:
            time.sleep(0.2)
        assert user.quota().usage.clusters == 2
        assert len(list(user.clusters(user.username))) == 2
