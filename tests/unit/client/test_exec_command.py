"""``spindle exec``: its command lines (everything after ``--`` is the command, verbatim), the NDJSON
stream read by the client (output chunks in order, the end, a node's error line, a stream cut before
its end), and what the command prints and exits with (the command's code; 124 at its timeout)."""
import json

import httpx
import pytest

from spindle_client.cli import parse_args
from spindle_client.client import SpindleClient, SpindleError
from spindle_client.exec_commands import TIMED_OUT_EXIT, cmd_exec

CLUSTER = {"owner": "alice", "product": "static-web", "version": "1.0", "id": "c0123456789"}
PATH = "/clusters/alice/static-web/1.0/c0123456789/members/server-1/exec"


@pytest.mark.parametrize("argv, expected", [
    (["exec", "c1", "worker-1", "--", "df", "-h", "/data/1"], ("c1", "worker-1", ["df", "-h", "/data/1"], 300)),
    (["exec", "c1", "worker-1", "--timeout", "5", "--", "sh", "-c", "x --timeout 9"],
     ("c1", "worker-1", ["sh", "-c", "x --timeout 9"], 5)),
    (["exec", "--timeout", "5", "c1", "m", "--", "--", "-x"], ("c1", "m", ["--", "-x"], 5)),
    (["exec", "c1", "m"], ("c1", "m", [], 300)),
])
def test_command_lines(argv, expected):
    args = parse_args(argv)
    assert (args.cluster_id, args.member, args.args, args.timeout) == expected


def client_answering(lines: list[dict] | None = None, status: int = 200, body: bytes | None = None) -> SpindleClient:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == PATH and json.loads(request.content) == {"command": ["id"], "timeout_s": 7}
        content = body if body is not None else b"".join(json.dumps(line).encode() + b"\n" for line in lines or [])
        return httpx.Response(status, content=content, headers={"content-type": "application/x-ndjson"})
    return SpindleClient("http://api", "token", transport=httpx.MockTransport(answer))


def test_the_stream_in_order_then_its_end():
    client = client_answering([{"stream": "stdout", "data": "a"}, {"stream": "stderr", "data": "b"},
                               {"stream": "stdout", "data": "c\n"}, {"exit_code": 3}])
    assert list(client.exec(CLUSTER, "server-1", ["id"], timeout_s=7)) == [
        ("stdout", "a"), ("stderr", "b"), ("stdout", "c\n"), ("exit", {"exit_code": 3})]


@pytest.mark.parametrize("client, code", [
    (client_answering([{"stream": "stdout", "data": "a"},
                       {"error": {"code": "NODE_UNREACHABLE", "message": "node n1 stopped answering"}}]),
     "NODE_UNREACHABLE"),
    (client_answering([{"stream": "stdout", "data": "a"}]), "STREAM_BROKEN"),
    (client_answering(status=404, body=json.dumps({"error": {"code": "MEMBER_NOT_FOUND", "message": "no",
                                                             "details": {}}}).encode()), "MEMBER_NOT_FOUND"),
])
def test_errors(client, code):
    with pytest.raises(SpindleError) as raised:
        list(client.exec(CLUSTER, "server-1", ["id"], timeout_s=7))
    assert raised.value.code == code


class FakeClient:
    def __init__(self, items):
        self.items = items

    def find_cluster(self, username, cluster_id):
        return CLUSTER

    def exec(self, cluster, member, command, timeout_s):
        yield from self.items


@pytest.mark.parametrize("end, code", [({"exit_code": 0}, 0), ({"exit_code": 3}, 3),
                                       ({"exit_code": 137, "timed_out": True}, TIMED_OUT_EXIT),
                                       ({"exit_code": None}, 1), ({"exit_code": 137, "truncated": True}, 137)])
def test_prints_each_stream_where_it_belongs_and_exits_like_the_command(end, code, capsys):
    args = parse_args(["exec", "c1", "server-1", "--", "id"])
    client = FakeClient([("stdout", "out\n"), ("stderr", "err\n"), ("exit", end)])
    assert cmd_exec(args, client, "alice") == code  # type: ignore[arg-type]
    printed = capsys.readouterr()
    assert printed.out == "out\n" and printed.err.startswith("err\n")


def test_json_prints_the_lines_as_they_came(capsys):
    args = parse_args(["exec", "c1", "server-1", "--json", "--", "id"])
    assert cmd_exec(args, FakeClient([("stdout", "x"), ("exit", {"exit_code": 0})]), "alice") == 0  # type: ignore[arg-type]
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == [
        {"stream": "stdout", "data": "x"}, {"exit_code": 0}]


def test_no_command_is_a_usage_error(capsys):
    assert cmd_exec(parse_args(["exec", "c1", "m"]), FakeClient([]), "alice") == 2  # type: ignore[arg-type]
    assert "needs a command" in capsys.readouterr().err
