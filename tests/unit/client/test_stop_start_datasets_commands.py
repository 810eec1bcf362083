"""``spindle stop``/``start`` (``--follow``), ``delete --keep-disks --dataset`` (``--force``), ``launch --dataset`` and
``spindle datasets``: their command lines and the calls they make."""
import httpx
import pytest

from spindle_client.cli import build_parser, parse_args
from spindle_client.client import SpindleClient
from spindle_client.commands import launch_options

PATH = "/clusters/alice/static-web/1.0/c0123456789"


@pytest.mark.parametrize("argv, expected", [
    (["stop", "c1"], ("stop", "c1", False)),
    (["stop", "c1", "--follow"], ("stop", "c1", True)),
    (["start", "c1", "--follow", "--user", "bob"], ("start", "c1", True)),
])
def test_stop_and_start(argv, expected):
    args = parse_args(argv)
    assert (args.command, args.cluster_id, args.follow) == expected


def test_delete_keeping_disks():
    args = parse_args(["delete", "c1", "--keep-disks", "--dataset", "my-data"])
    assert (args.keep_disks, args.dataset) == (True, "my-data")
    assert (parse_args(["delete", "c1"]).keep_disks, parse_args(["delete", "c1"]).dataset) == (False, None)
    assert (parse_args(["delete", "c1", "--force"]).force, parse_args(["delete", "c1"]).force) == (True, False)


def test_launch_with_a_dataset_sets_the_option():
    assert launch_options(parse_args(["launch", "static-web", "1.0", "--dataset", "my-data"])) == {"dataset": "my-data"}
    with pytest.raises(ValueError, match="both"):
        launch_options(parse_args(["launch", "static-web", "1.0", "--dataset", "a", "--opt", "dataset=b"]))


@pytest.mark.parametrize("argv, expected", [
    (["datasets"], ("list", None, False)),
    (["datasets", "--all"], ("list", None, True)),
    (["datasets", "reclaim", "my-data"], ("reclaim", "my-data", False)),
])
def test_datasets(argv, expected):
    args = build_parser().parse_args(argv)
    assert (args.action, args.name, args.all) == expected


def test_the_calls_carry_what_the_api_takes():
    seen = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, dict(request.url.params)))
        return httpx.Response(202, json={"error": {"code": "X", "message": "stop here", "details": {}}})

    client = SpindleClient("http://api", "t", transport=httpx.MockTransport(answer))
    cluster = {"owner": "alice", "product": "static-web", "version": "1.0", "id": "c0123456789"}
    for call in (lambda: client.stop(cluster), lambda: client.start(cluster),
                 lambda: client.delete(cluster, keep_disks=True, dataset="my-data"), lambda: client.delete(cluster),
                 lambda: client.delete(cluster, force=True), lambda: client.reclaim_dataset("alice", "my-data")):
        try:
            call()
        except Exception:  # the fake answer is not a cluster: only the request matters here
            pass
    assert seen == [("POST", f"{PATH}/stop", {}), ("POST", f"{PATH}/start", {}),
                    ("DELETE", PATH, {"keep_disks": "true", "dataset": "my-data"}), ("DELETE", PATH, {}),
                    ("DELETE", PATH, {"force": "true"}), ("DELETE", "/datasets/alice/my-data", {})]


@pytest.mark.parametrize("argv, expected", [
    (["resize", "c1", "worker=4"], ([("worker", 4)], False, False)),
    (["resize", "c1", "worker=3", "master=1", "--plan"], ([("worker", 3), ("master", 1)], True, False)),
    (["resize", "c1", "worker=0", "--follow"], ([("worker", 0)], False, True)),
])
def test_resize(argv, expected):
    args = parse_args(argv)
    assert (args.counts, args.plan, args.follow) == expected


@pytest.mark.parametrize("argv", [["resize", "c1"], ["resize", "c1", "worker"], ["resize", "c1", "worker=-1"],
                                  ["resize", "c1", "=3"], ["resize", "c1", "worker=x"]])
def test_bad_resize_lines_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exited:
        parse_args(argv)
    assert exited.value.code == 2 and capsys.readouterr().err
