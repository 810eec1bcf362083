"""Pure parts of durable releases: the retry backoff, and how the sweep judges each disk holding by
its holder's task (scheduler/spindle_scheduler/mesos/releases.py, sweep.py)."""
from datetime import UTC, datetime, timedelta

import pytest

from spindle_scheduler.mesos.releases import backoff_s
from spindle_scheduler.mesos.sweep import Holder, Holding, judge


@pytest.mark.parametrize(("failures", "expected"), [
    (0, 0.0),  # never failed: now
    (1, 1.0),
    (2, 2.0),
    (3, 4.0),
    (4, 8.0),
    (5, 15.0),  # capped
    (40, 15.0),
])
def test_backoff_doubles_up_to_its_cap(failures, expected):
    assert backoff_s(failures, first_s=1.0, max_s=15.0) == expected


NOW = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)
GRACE = timedelta(seconds=30)
OLD = NOW - timedelta(minutes=5)


@pytest.mark.parametrize(("holder", "since", "verdict"), [
    (Holder("TASK_RUNNING"), OLD, "live"),
    (Holder("TASK_STAGING"), OLD, "live"),
    (Holder("LAUNCHING"), OLD, "live"),
    (Holder("TASK_UNREACHABLE"), OLD, "live"),  # its node may come back with its data
    (Holder("TASK_KILLED", release_owed=True), OLD, "owed"),  # the release worker's
    (Holder("TASK_FAILED", release_owed=False), OLD, "ended"),  # released once, still held: again
    (Holder("TASK_LOST", release_owed=False), OLD, "ended"),
    (Holder("PENDING"), OLD, "stale_pending"),  # a crash between holding and launching
    (None, OLD, "foreign"),  # not this scheduler's task: left alone
    (Holder("TASK_KILLED"), NOW - timedelta(seconds=5), "recent"),  # within the grace period
    (Holder("PENDING"), NOW - timedelta(seconds=29), "recent"),  # a launch may be under way
    (None, NOW, "recent"),
])
def test_each_holding_is_judged_by_its_holder(holder, since, verdict):
    holders = {"m1": holder} if holder else {}
    found = judge([Holding("m1", 7, since)], holders, NOW, GRACE)
    sorted_into = {name for name in ("stale_pending", "ended", "owed", "live", "recent", "foreign")
                   if getattr(found, name) == ["m1"]}
    assert sorted_into == {verdict}


def test_an_owner_is_judged_once_by_its_newest_disk():
    holdings = [Holding("m1", 1, OLD), Holding("m1", 2, NOW - timedelta(seconds=1)), Holding("m2", 3, OLD),
                Holding("m2", 4, OLD)]
    found = judge(holdings, {"m1": Holder("TASK_KILLED"), "m2": Holder("TASK_KILLED")}, NOW, GRACE)
    assert found.recent == ["m1"] and found.ended == ["m2"]
