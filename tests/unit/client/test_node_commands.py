"""``spindle admin nodes``: the node inventory as a table with each node's rack and failure domain,
``set-rack NODE RACK`` and ``set-rack NODE --clear`` sending the one PATCH they mean, and bad
arguments refused before anything is sent."""
import json
from types import SimpleNamespace

import pytest

from spindle_client import models
from spindle_client.node_commands import node_rows
from tests.support.cli import run_cli


def node(name="n1", rack=None, cpus=4.0, mem_mb=8192):
    return models.Node.model_validate({
        "id": 1, "name": name, "address": "10.0.0.1", "disk_root": f"/srv/spindle/{name}", "cpus": cpus,
        "mem_mb": mem_mb, "created_at": "2026-11-23T19:52:40Z", "last_seen_at": None, "rack": rack,
        "failure_domain": rack or name})


@pytest.mark.parametrize(("nodes", "rows"), [
    ([], []),
    ([node()], [("n1", "10.0.0.1", "4", "8192", "-", "n1")]),
    ([node("n1", "r1", cpus=1.5), node("n2", "r1", cpus=None, mem_mb=None)],
     [("n1", "10.0.0.1", "1.5", "8192", "r1", "r1"), ("n2", "10.0.0.1", "-", "-", "r1", "r1")]),
])
def test_each_node_is_a_row_with_its_rack_and_failure_domain(nodes, rows):
    assert node_rows(nodes) == rows


def admin_client(sent):
    """A stand-in for SpindleClient's node calls that records each rack it is asked to set."""
    return SimpleNamespace(nodes=lambda: [node("n1", "r1"), node("n2")], node=lambda name: node(name),
                           set_rack=lambda name, rack: sent.append((name, rack)) or node(name, rack))


def test_the_listing_shows_each_nodes_rack(monkeypatch, capsys):
    assert run_cli(monkeypatch, ["admin", "nodes"], admin_client([])) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NODE", "ADDRESS", "CPUS", "MEM_MB", "RACK", "FAILURE", "DOMAIN"]
    assert [line.split() for line in out[1:]] == [["n1", "10.0.0.1", "4", "8192", "r1", "r1"],
                                                  ["n2", "10.0.0.1", "4", "8192", "-", "n2"]]


@pytest.mark.parametrize(("argv", "sent", "shown"), [
    (["admin", "nodes", "set-rack", "n1", "rack-1"], [("n1", "rack-1")], "n1 10.0.0.1 4 8192 rack-1 rack-1"),
    (["admin", "nodes", "set-rack", "n1", "--clear"], [("n1", None)], "n1 10.0.0.1 4 8192 - n1"),
    (["admin", "nodes", "set-rack", "--clear", "n2"], [("n2", None)], "n2 10.0.0.1 4 8192 - n2"),
    (["admin", "nodes", "show", "n2"], [], "n2 10.0.0.1 4 8192 - n2"),
])
def test_set_rack_sends_the_rack_or_its_clearing(monkeypatch, capsys, argv, sent, shown):
    calls = []
    assert run_cli(monkeypatch, argv, admin_client(calls)) == 0
    assert calls == sent
    assert " ".join(capsys.readouterr().out.splitlines()[1].split()) == shown


def test_json_prints_the_apis_answer(monkeypatch, capsys):
    assert run_cli(monkeypatch, ["admin", "nodes", "set-rack", "n1", "r1", "--json"], admin_client([])) == 0
    [answer] = json.loads(capsys.readouterr().out)
    assert (answer["rack"], answer["failure_domain"]) == ("r1", "r1")


@pytest.mark.parametrize(("argv", "message"), [
    (["admin", "nodes", "set-rack", "n1"], "needs a RACK or --clear"),
    (["admin", "nodes", "set-rack", "n1", "r1", "--clear"], "needs a RACK or --clear"),
    (["admin", "nodes", "set-rack"], "needs the node's name"),
    (["admin", "nodes", "show"], "needs the node's name"),
    (["admin", "nodes", "list", "n1"], "takes no node"),
    (["admin", "nodes", "set", "n1"], "not set"),
    (["admin", "quota", "set-rack", "bob", "r1"], "'admin quota' takes no rack"),
    (["admin", "quota", "show", "bob", "--clear"], "'admin quota' takes no rack"),
])
def test_admin_nodes_usage_errors(monkeypatch, capsys, argv, message):
    calls = []
    assert run_cli(monkeypatch, argv, admin_client(calls)) == 2
    assert message in capsys.readouterr().err
    assert calls == []
