"""The CLI's ``--opt`` arguments become nested launch options; bad ones are refused."""
import pytest

from spindle_client.cli import build_parser
from spindle_client.client import parse_sse
from spindle_client.commands import parse_opts


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
