"""``spindle quota`` and ``spindle admin quota``: usage against quota as a table, the whole quota an
admin's ``set`` sends (the user's other limits kept), and bad arguments refused."""
import argparse
from types import SimpleNamespace

import pytest

from spindle_client import models
from spindle_client.quota_commands import disk_limit, merged_limits, quota_rows
from tests.support.cli import run_cli

DEFAULT_LIMITS = ["clusters", "cpus", "mem_mb", "floating_ips", "disks.hdd", "disks.ssd", "disks.nvme"]


def quota(defaults=DEFAULT_LIMITS, floating_ips=32, hdd=16, cpus=32.0):
    return models.Quota.model_validate({
        "username": "alice", "defaults": defaults,
        "limits": {"clusters": 10, "cpus": cpus, "mem_mb": 65536, "disks": {"hdd": hdd, "ssd": 16, "nvme": 16},
                   "floating_ips": floating_ips},
        "usage": {"clusters": 2, "cpus": 0.6, "mem_mb": 256, "disks": {"hdd": 2, "ssd": 0, "nvme": 0},
                  "floating_ips": 3}})


def test_usage_against_quota_rows_say_which_limits_are_defaults():
    rows = quota_rows(quota(defaults=["clusters", "cpus", "mem_mb", "disks.ssd", "disks.nvme"], floating_ips=3,
                            hdd=4))
    assert rows == [("clusters", "2", "10 (default)"), ("cpus", "0.6", "32 (default)"),
                    ("mem_mb", "256", "65536 (default)"), ("floating_ips", "3", "3"), ("disks.hdd", "2", "4"),
                    ("disks.ssd", "0", "16 (default)"), ("disks.nvme", "0", "16 (default)")]


OWN = ["clusters", "mem_mb", "disks.ssd", "disks.nvme"]  # the user has their own cpus, floating_ips, disks.hdd


@pytest.mark.parametrize(("current", "changes", "disks", "reset", "sent"), [
    (quota(), {"floating_ips": 5}, [], [], {"floating_ips": 5}),
    (quota(), {"cpus": 2.5, "clusters": None}, [("hdd", 2)], [], {"cpus": 2.5, "disks": {"hdd": 2}}),
    (quota(OWN, floating_ips=3, hdd=4, cpus=8.0), {"clusters": 1}, [], [],
     {"clusters": 1, "cpus": 8.0, "floating_ips": 3, "disks": {"hdd": 4}}),
    (quota(OWN, floating_ips=3, hdd=4, cpus=8.0), {}, [("ssd", 0)], ["cpus", "disks.hdd"],
     {"floating_ips": 3, "disks": {"ssd": 0}}),
    (quota(OWN, floating_ips=3, hdd=4, cpus=8.0), {}, [], ["floating_ips", "cpus", "disks.hdd"], {}),
])
def test_set_sends_the_whole_quota_keeping_the_users_other_limits(current, changes, disks, reset, sent):
    assert merged_limits(current, changes, disks, reset) == sent


def test_an_unknown_limit_to_reset_is_an_error():
    with pytest.raises(ValueError, match="not ram"):
        merged_limits(quota(), {}, [], ["ram"])


@pytest.mark.parametrize(("text", "parsed"), [("hdd=4", ("hdd", 4)), ("nvme=0", ("nvme", 0)), ("tape=1", None),
                                               ("hdd", None), ("hdd=-1", None), ("hdd=two", None)])
def test_disk_limits_are_class_equals_count(text, parsed):
    if parsed is None:
        with pytest.raises(argparse.ArgumentTypeError):
            disk_limit(text)
    else:
        assert disk_limit(text) == parsed


def test_admin_quota_set_reads_then_puts_and_prints_the_result(monkeypatch, capsys):
    sent = []
    client = SimpleNamespace(quota=lambda username=None: quota(),
                             set_quota=lambda username, body: sent.append((username, body)) or quota(
                                 defaults=DEFAULT_LIMITS[:3] + DEFAULT_LIMITS[4:], floating_ips=3))
    assert run_cli(monkeypatch, ["admin", "quota", "set", "bob", "--ips", "3", "--disk", "ssd=1"], client) == 0
    assert sent == [("bob", {"floating_ips": 3, "disks": {"ssd": 1}})]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "quota of alice" and "floating_ips  3         3" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["admin", "quota", "set", "bob"], "needs a limit"),
    (["admin", "quota", "set", "--ips", "3"], "needs the user's name"),
    (["admin", "quota", "show"], "needs the user's name"),
    (["admin", "quota", "list", "bob"], "takes no user"),
    (["admin", "quota", "set", "bob", "--default", "ram"], "not ram"),
])
def test_admin_quota_usage_errors(monkeypatch, capsys, argv, message):
    client = SimpleNamespace(quota=lambda username=None: quota())
    assert run_cli(monkeypatch, argv, client) == 2
    assert message in capsys.readouterr().err


def test_quota_shows_your_usage_against_your_quota(monkeypatch, capsys):
    asked = []
    client = SimpleNamespace(quota=lambda username=None: asked.append(username) or quota())
    assert run_cli(monkeypatch, ["quota"], client) == 0
    assert asked == [None]
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["LIMIT", "USED", "QUOTA"] and out[2].split() == ["clusters", "2", "10", "(default)"]
