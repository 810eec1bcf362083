"""Quotas' pure parts: a launch's demand, a user's limits (own or default), which limits a demand
passes, and the refusal naming them."""
import pytest

from spindle_orchestrator.models import Quota
from spindle_orchestrator.quotas import Amounts, Defaults, demand_of, exceeded, growth, limits_of, refusal

DEFAULTS = Defaults(clusters=10, cpus=32.0, mem_mb=65536, disks_per_class=16, floating_ips=32)
LIMITS = Amounts(clusters=2, cpus=4.0, mem_mb=1024, disks={"hdd": 2, "ssd": 0, "nvme": 0}, floating_ips=3)


def member(cpus=0.5, mem_mb=128, **disks):
    return {"role": "server", "index": 1, "cpus": cpus, "mem_mb": mem_mb, "disks": disks}


@pytest.mark.parametrize(("members", "ips", "expected"), [
    ([member()], True, Amounts(1, 0.5, 128, {}, 1)),
    ([member(hdd=1), member(hdd=2, ssd=1)], True, Amounts(1, 1.0, 256, {"hdd": 3, "ssd": 1}, 2)),
    ([member(), member()], False, Amounts(1, 1.0, 256, {}, 0)),  # no IP pool: no floating IPs
    ([member(hdd=0)], True, Amounts(1, 0.5, 128, {}, 1)),
])
def test_demand_of_a_launch(members, ips, expected):
    assert demand_of(members, ips) == expected


@pytest.mark.parametrize(("row", "limits", "defaults"), [
    (None, Amounts(10, 32.0, 65536, {"hdd": 16, "ssd": 16, "nvme": 16}, 32),
     ["clusters", "cpus", "mem_mb", "floating_ips", "disks.hdd", "disks.ssd", "disks.nvme"]),
    (Quota(owner="u1"), Amounts(10, 32.0, 65536, {"hdd": 16, "ssd": 16, "nvme": 16}, 32),
     ["clusters", "cpus", "mem_mb", "floating_ips", "disks.hdd", "disks.ssd", "disks.nvme"]),
    (Quota(owner="u1", floating_ips=3, cpus=0.0, disks={"ssd": 0}),
     Amounts(10, 0.0, 65536, {"hdd": 16, "ssd": 0, "nvme": 16}, 3),
     ["clusters", "mem_mb", "disks.hdd", "disks.nvme"]),
])
def test_limits_are_the_users_own_or_the_defaults(row, limits, defaults):
    assert limits_of(row, DEFAULTS) == (limits, defaults)


@pytest.mark.parametrize(("usage", "demand", "passed"), [
    (Amounts(), Amounts(1, 1.0, 128, {}, 1), []),
    (Amounts(1, 3.0, 512, {"hdd": 1}, 2), Amounts(1, 1.0, 512, {"hdd": 1}, 1), []),  # exactly at every limit
    (Amounts(1, 0.5, 128, {}, 3), Amounts(1, 0.5, 128, {}, 1), [("floating_ips", 3, 3, 1)]),
    (Amounts(2, 0.5, 128, {}, 1), Amounts(1, 4.0, 128, {"hdd": 3}, 1),
     [("clusters", 2, 2, 1), ("cpus", 4.0, 0.5, 4.0), ("disks.hdd", 2, 0, 3)]),
    (Amounts(0, 0.1 + 0.2, 0, {}, 0), Amounts(0, 3.7, 0, {}, 0), []),  # float sums: 0.3 + 3.7 is 4
    (Amounts(0, 0, 0, {}, 0), Amounts(0, 0, 0, {"ssd": 1}, 0), [("disks.ssd", 0, 0, 1)]),
    # over a lowered limit already: what does not need more of it still passes
    (Amounts(1, 8.0, 128, {}, 1), Amounts(0, 0, 0, {}, 1), []),
])
def test_which_limits_a_demand_passes(usage, demand, passed):
    assert [(e.limit, e.quota, e.usage, e.requested) for e in exceeded(LIMITS, usage, demand)] == passed


def test_the_refusal_names_the_limit_the_amount_asked_the_usage_and_the_quota():
    error = refusal("u7", exceeded(LIMITS, Amounts(2, 0.5, 128, {}, 3), Amounts(1, 0.5, 128, {}, 1)))
    assert (error.status, error.code) == (403, "QUOTA_EXCEEDED")
    assert error.message == ("over quota: clusters: asking for 1 with 2 in use, the quota is 2 "
                             "(also floating_ips)")
    assert error.details == {"owner": "u7", "limit": "clusters", "quota": 2, "usage": 2, "requested": 1,
                             "exceeded": [{"limit": "clusters", "quota": 2, "usage": 2, "requested": 1},
                                          {"limit": "floating_ips", "quota": 3, "usage": 3, "requested": 1}]}


def test_amounts_add_and_round_trip_as_json():
    total = Amounts(1, 0.5, 128, {"hdd": 1}, 1) + Amounts(1, 0.25, 64, {"ssd": 2}, 2)
    assert total == Amounts(2, 0.75, 192, {"hdd": 1, "ssd": 2}, 3)
    assert total.as_json() == {"clusters": 2, "cpus": 0.75, "mem_mb": 192, "disks": {"hdd": 1, "ssd": 2, "nvme": 0},
                               "floating_ips": 3}
    assert Amounts.of_json(total.as_json()) == total


@pytest.mark.parametrize("before, after, grown", [
    (Amounts(1, 1.0, 1024, {"hdd": 2}, 3), Amounts(1, 2.0, 2048, {"hdd": 4}, 5), Amounts(0, 1.0, 1024, {"hdd": 2}, 2)),
    (Amounts(1, 2.0, 2048, {"hdd": 4}, 5), Amounts(1, 1.0, 1024, {"hdd": 2}, 3), Amounts(0, 0.0, 0, {}, 0)),
    (Amounts(1, 1.0, 1024, {"hdd": 2}, 3), Amounts(1, 1.0, 1024, {"hdd": 1, "ssd": 1}, 3),
     Amounts(0, 0.0, 0, {"ssd": 1}, 0)),
])
def test_a_resize_asks_only_what_it_adds(before, after, grown):
    assert growth(before, after) == grown
