"""The client reads every answer into the models generated from the API's OpenAPI document: a
wrong shape fails loudly, the commands use attributes, and ``--json`` prints the API's JSON as it
came. The live timeline reconnects after the last event it saw when its stream drops."""
import argparse
import copy
import json

import httpx
import pytest

from spindle_client import models
from spindle_client.client import SpindleClient, SpindleError, UnexpectedAnswer, api_json, cluster_path
from spindle_client.commands import cmd_clusters, cmd_events, cmd_show, cmd_submit

CLUSTER = {
    "id": "c-1", "owner": "ann", "product": "static-web", "version": "1.0", "state": "RUNNING",
    "reason_code": None, "reason": None, "options": {"roles": {"server": {"count": 1, "cpus": 1}}},
    "created_at": "2026-11-23T19:52:47.123456Z", "updated_at": "2026-11-23T19:52:57Z",
    "members": [{"member_id": "c-1-server-1", "role": "server", "state": "TASK_RUNNING", "message": "",
                 "node": "n1", "ip": "172.31.200.130", "dns_name": "c-1-server-1.service.spindle",
                 "disks": [{"container_path": "/data/1", "mount_point": "/var/lib/spindle/disks/spdl-1",
                            "id": 3, "device_path": "/dev/loop3", "disk_class": "hdd", "size_bytes": 4294967296}],
                 "ports": [{"name": "http", "port": 8000, "protocol": "tcp", "ui": True}], "replacements": 0}],
}
EVENTS = [{"seq": s, "at": f"2026-11-23T19:52:4{s}Z", "member_id": None, "step": "cluster", "state": st,
           "message": f"now {st}"} for s, st in ((1, "PENDING"), (2, "DEPLOYING"), (3, "RUNNING"))]
JOB = {"id": "j-1", "cluster_id": "c-1", "owner": "ann", "state": "SUCCEEDED", "main": "main.py", "args": ["-x"],
       "files": ["main.py"], "message": "exited with 0", "exit_code": 0, "ip": "172.31.200.140",
       "created_at": "2026-11-23T19:53:00Z", "started_at": "2026-11-23T19:53:01Z",
       "finished_at": "2026-11-23T19:53:02Z", "stdout": "hello\n", "stderr": ""}


def sse(name: str, data, event_id: int | None = None) -> str:
    return (f"id: {event_id}\n" if event_id else "") + f"event: {name}\ndata: {json.dumps(data)}\n\n"


def client_for(handler) -> SpindleClient:
    return SpindleClient("http://api", "token", transport=httpx.MockTransport(handler))


def answering(body, status: int = 200) -> SpindleClient:
    return client_for(lambda request: httpx.Response(status, json=body))


def test_a_cluster_is_read_into_the_generated_model():
    cluster = answering(CLUSTER).cluster(CLUSTER)
    assert isinstance(cluster, models.Cluster) and isinstance(cluster.members[0], models.Member)
    assert cluster.state == models.ClusterState.RUNNING == "RUNNING"
    assert cluster.members[0].disks[0].device_path == "/dev/loop3"
    assert cluster["members"][0]["ip"] == "172.31.200.130", "item access reads the same fields"
    assert cluster.get("no_such_field", "x") == "x" and cluster_path(cluster) == "/clusters/ann/static-web/1.0/c-1"
    assert api_json(cluster) == CLUSTER and api_json(cluster.members) == CLUSTER["members"]


@pytest.mark.parametrize("change, path", [
    (lambda c: c.pop("owner"), "owner"),
    (lambda c: c.update(state="SLEEPING"), "state"),
    (lambda c: c["members"][0].update(disks="none"), "members.0.disks"),
    (lambda c: c.update(surprise=1), "surprise"),
])
def test_an_answer_of_another_shape_fails_loudly(change, path):
    body = copy.deepcopy(CLUSTER)
    change(body)
    with pytest.raises(UnexpectedAnswer) as raised:
        answering(body).cluster(CLUSTER)
    assert raised.value.code == "UNEXPECTED_ANSWER" and "GET /clusters/ann/static-web/1.0/c-1" in str(raised.value)
    assert [e["path"] for e in raised.value.details["errors"]] == [path]


def test_error_answers_carry_the_envelope():
    envelope = {"error": {"code": "CLUSTER_NOT_FOUND", "message": "ann has no cluster c-9", "details": {"id": "c-9"}}}
    with pytest.raises(SpindleError) as raised:
        answering(envelope, 404).cluster(CLUSTER)
    assert (raised.value.status, raised.value.code, raised.value.details) == (404, "CLUSTER_NOT_FOUND", {"id": "c-9"})
    with pytest.raises(SpindleError) as raised:
        client_for(lambda request: httpx.Response(502, text="<html>Bad Gateway</html>")).me()
    assert (raised.value.status, raised.value.code) == (502, "HTTP_ERROR")


def test_clusters_follows_the_pages():
    second = {**CLUSTER, "id": "c-2"}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("page_token") == "p2":
            return httpx.Response(200, json={"items": [second], "next_page_token": None})
        return httpx.Response(200, json={"items": [CLUSTER], "next_page_token": "p2"})

    assert [c.id for c in client_for(handler).clusters("ann")] == ["c-1", "c-2"]


def test_the_live_timeline_reconnects_after_the_last_event_it_saw(monkeypatch):
    monkeypatch.setattr("spindle_client.client.time.sleep", lambda _: None)
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if len(requests) == 1:  # drops after two events, without its end
            return httpx.Response(200, text=sse("event", EVENTS[0], 1) + ": keep-alive\n\n"
                                  + sse("event", EVENTS[1], 2))
        return httpx.Response(200, text=sse("event", EVENTS[2], 3) + sse("end", CLUSTER))

    items = list(client_for(handler).follow_events(CLUSTER))
    assert [(kind, type(data)) for kind, data in items] == [("event", models.Event)] * 3 + [("end", models.Cluster)]
    assert [data.seq for _, data in items[:3]] == [1, 2, 3] and items[-1][1].state == "RUNNING"
    assert "Last-Event-ID" not in requests[0].headers and requests[0].headers["Accept"] == "text/event-stream"
    assert requests[1].headers["Last-Event-ID"] == "2" and requests[1].url.params["after_seq"] == "2"


def test_the_live_timeline_gives_up_when_the_stream_keeps_failing(monkeypatch):
    monkeypatch.setattr("spindle_client.client.time.sleep", lambda _: None)
    client = client_for(lambda request: httpx.Response(200, text=": keep-alive\n\n"))
    with pytest.raises(SpindleError) as raised:
        list(client.follow_events(CLUSTER, retries=2))
    assert raised.value.code == "STREAM_FAILED"


def args(**kwargs) -> argparse.Namespace:
    return argparse.Namespace(**{"json": False, "follow": False, "state": None, "product": None, **kwargs})


def listing_api(request: httpx.Request) -> httpx.Response:
    if request.url.path == "/clusters/ann":
        return httpx.Response(200, json={"items": [CLUSTER], "next_page_token": None})
    if request.url.path.endswith("/events"):
        return httpx.Response(200, json=EVENTS)
    if request.url.path.endswith("/jobs"):
        return httpx.Response(202, json={**JOB, "state": "PENDING", "stdout": None, "stderr": None})
    if request.url.path.endswith("/jobs/j-1"):
        return httpx.Response(200, json=JOB)
    return httpx.Response(200, json=CLUSTER)


def test_json_output_is_the_api_s_json(capsys):
    assert cmd_show(args(json=True, cluster_id="c-1"), client_for(listing_api), "ann") == 0
    printed = capsys.readouterr().out
    assert json.loads(printed) == CLUSTER and '"cpus": 1\n' in printed, "numbers print as the API sent them"
    assert cmd_clusters(args(json=True), client_for(listing_api), "ann") == 0
    assert json.loads(capsys.readouterr().out) == [CLUSTER]
    assert cmd_events(args(json=True, cluster_id="c-1"), client_for(listing_api), "ann") == 0
    assert json.loads(capsys.readouterr().out) == EVENTS


def test_human_output_reads_the_models(capsys):
    assert cmd_show(args(cluster_id="c-1"), client_for(listing_api), "ann") == 0
    out = capsys.readouterr().out
    assert "state    RUNNING" in out and "c-1-server-1" in out and "172.31.200.130" in out
    assert cmd_events(args(cluster_id="c-1"), client_for(listing_api), "ann") == 0
    assert "19:52:43  cluster" in capsys.readouterr().out


def test_submit_wait_prints_the_output_and_exits_like_the_job(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("spindle_client.commands.time.sleep", lambda _: None)
    (tmp_path / "main.py").write_text("print('hello')\n")
    sent = []

    def api(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            sent.append(json.loads(request.content))
        return listing_api(request)

    code = cmd_submit(args(cluster_id="c-1", main="main.py", file=[], args=["-x"], wait=True), client_for(api), "ann")
    assert code == 0 and capsys.readouterr().out == "hello\n"
    assert sent[0]["main"] == "main.py" and sent[0]["args"] == ["-x"] and set(sent[0]["files"]) == {"main.py"}
