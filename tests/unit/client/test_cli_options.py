"""The CLI's ``--opt`` arguments become nested launch options; bad ones are refused."""
import pytest

from spindle_client.cli import build_parser
from spindle_client.client import parse_sse
from spindle_client.commands import launch_options, parse_opts


def test_dotted_keys_nest_and_values_parse_as_json():
    args = build_parser().parse_args([
        "launch", "spark", "3.5", "--opt", "roles.worker.count=3", "--opt", "roles.worker.disks.ssd=1",
        "--opt", "wait_for_resources=true", "--opt", "settings.name=hello world", "--opt", "settings.list=[1,2]"])
    assert (args.product, args.version) == ("spark", "3.5")
    assert parse_opts(args.opt) == {
        "roles": {"worker": {"count": 3, "disks": {"ssd": 1}}}, "wait_for_resources": True,
        "settings": {"name": "hello world", "list": [1, 2]}}


def test_a_value_may_contain_equals_signs():
    assert parse_opts([("settings.conf", "a=b")]) == {"settings": {"conf": "a=b"}}


@pytest.mark.parametrize("pairs", [
    [("a", "1"), ("a", "2")],
    [("a", "1"), ("a.b", "2")],
    [("a.b", "1"), ("a", "2")],
    [("a..b", "1")],
])
def test_conflicting_or_empty_keys_are_errors(pairs):
    with pytest.raises(ValueError):
        parse_opts(pairs)


def test_an_option_without_equals_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["launch", "spark", "3.5", "--opt", "roles.worker.count"])
    assert exited.value.code == 2 and "expected KEY=VALUE" in capsys.readouterr().err


def test_server_sent_events_are_parsed_and_keepalives_skipped():
    lines = ["id: 1", "event: event", 'data: {"seq": 1}', "", ": keep-alive", "", "event: end",
             'data: {"state": "RUNNING"}', ""]
    assert list(parse_sse(iter(lines))) == [("event", {"seq": 1}), ("end", {"state": "RUNNING"})]


def launch_args(*flags):
    return build_parser().parse_args(["launch", "spark", "3.5", *flags])


@pytest.mark.parametrize("flags, placement", [
    (["--strategy", "pack"], {"strategy": "pack"}),
    (["--anti-affinity", "worker", "--anti-affinity", "master"], {"anti_affinity": ["worker", "master"]}),
    (["--prefer-node", "n1", "--exclude-node", "n2", "--exclude-node", "n3"],
     {"preferred_nodes": ["n1"], "excluded_nodes": ["n2", "n3"]}),
    (["--anti-affinity", "worker", "--anti-affinity", "worker"], {"anti_affinity": ["worker"]}),
    (["--plan", "--strategy", "spread", "--exclude-node", "n2"], {"strategy": "spread", "excluded_nodes": ["n2"]}),
])
def test_placement_flags_fill_the_placement_option(flags, placement):
    assert launch_options(launch_args("--opt", "roles.worker.count=3", *flags)) == {
        "roles": {"worker": {"count": 3}}, "placement": placement}


def test_placement_flags_and_opts_combine_when_they_set_different_keys():
    args = launch_args("--opt", "placement.strategy=pack", "--exclude-node", "n2")
    assert launch_options(args) == {"placement": {"strategy": "pack", "excluded_nodes": ["n2"]}}
    assert launch_options(launch_args()) == {}, "no flags: no placement (the API's defaults apply)"


@pytest.mark.parametrize("flags", [
    ["--opt", "placement.strategy=pack", "--strategy", "spread"],
    ["--opt", 'placement.excluded_nodes=["n1"]', "--exclude-node", "n2"],
    ["--opt", "placement=spread", "--strategy", "pack"],
])
def test_a_placement_key_set_both_ways_is_an_error(flags):
    with pytest.raises(ValueError, match="placement"):
        launch_options(launch_args(*flags))


def test_an_unknown_strategy_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        launch_args("--strategy", "random")
    assert exited.value.code == 2 and "invalid choice: 'random'" in capsys.readouterr().err


def test_launch_plan_sends_the_placement_flags_and_shows_each_nodes_reason(monkeypatch, capsys):
    from types import SimpleNamespace

    from spindle_client import cli

    sent = []
    refused = SimpleNamespace(placeable=False, summary="server-2 fits no node", members=[], reasons=[SimpleNamespace(
        member_id="server-2", nodes=[SimpleNamespace(node="n1", constraint="anti_affinity",
                                                     message="already has a member of role server")])])
    client = SimpleNamespace(plan=lambda product, version, options: sent.append((product, version, options)) or refused)
    monkeypatch.setattr(cli, "api_command", lambda func: lambda args: func(args, client, "alice"))
    with pytest.raises(SystemExit) as exited:
        cli.main(["launch", "static-web", "1.0", "--plan", "--anti-affinity", "server", "--exclude-node", "n9",
                  "--opt", "roles.server.count=2"])
    assert exited.value.code == 0
    assert sent == [("static-web", "1.0", {"roles": {"server": {"count": 2}},
                                           "placement": {"anti_affinity": ["server"], "excluded_nodes": ["n9"]}})]
    assert capsys.readouterr().out.splitlines() == [
        "NOT placeable: server-2 fits no node", "server-2 cannot be placed:",
        "  n1: anti_affinity: already has a member of role server"]


def test_a_conflict_between_flags_and_opts_is_a_usage_error(capsys):
    from spindle_client import cli

    with pytest.raises(SystemExit) as exited:
        cli.main(["launch", "spark", "3.5", "--opt", "placement.strategy=pack", "--strategy", "spread"])
    assert exited.value.code == 2 and "placement.strategy is given both" in capsys.readouterr().err
