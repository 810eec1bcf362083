"""A member's logs through the public API on the running platform: a static-web member's request
log (python's http.server writes one line per request to stderr) read as the last lines, and live as
SSE while a request is made; others' clusters and unknown members are 404 (the CLI's `spindle logs` runs in
test_documented_commands)."""
import json
import threading
import time

import httpx
import pytest

from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import retrying, settled

LAUNCH = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "logs") as client:
        yield client


@pytest.fixture(scope="module")
def cluster(owner):
    launched = retrying(lambda: owner.launch("static-web", "1.0", LAUNCH))
    try:
        running = settled(owner, launched, ("RUNNING", "FAILED"), timeout=600)
        assert running["state"] == "RUNNING", (running["reason_code"], running["reason"])
        yield running
    finally:
        retrying(lambda: owner.delete(launched))
        settled(owner, launched, ("DESTROYED",), timeout=300)


def logs_path(cluster: dict, member: str) -> str:
    return f"/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/members/{member}/logs"


def auth(client) -> dict:
    return {"Authorization": f"Bearer {client.token}"}


def test_the_last_lines_and_a_live_stream(owner, cluster):
    member = cluster["members"][0]
    marker = f"/index.html?tail-{time.time_ns()}"
    assert httpx.get(f"http://{member['ip']}:8000{marker}", timeout=10).status_code == 200
    deadline, text = time.monotonic() + 30, ""
    while time.monotonic() < deadline and marker not in text:
        answer = httpx.get(f"{API_URL}{logs_path(cluster, 'server-1')}", params={"tail": 20}, headers=auth(owner),
                           timeout=30)
        assert answer.status_code == 200, answer.text
        text = answer.text
        time.sleep(1)
    assert marker in text, text
    lines = text.splitlines()
    assert len(lines) <= 20 and all(line[:4].isdigit() and line[10] == "T" for line in lines), lines
    # By its id too; and live: a line written after the stream opened arrives as an SSE `line` event.
    live_marker, seen = f"/index.html?live-{time.time_ns()}", []

    def later_request() -> None:
        time.sleep(3)
        httpx.get(f"http://{member['ip']}:8000{live_marker}", timeout=10)

    threading.Thread(target=later_request, daemon=True).start()
    with httpx.stream("GET", f"{API_URL}{logs_path(cluster, member['member_id'])}",
                      params={"tail": 0, "follow": "true"}, headers=auth(owner),
                      timeout=httpx.Timeout(10, read=30)) as stream:
        assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        event = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "line":
                seen.append(json.loads(line[5:]))
                if live_marker in seen[-1]:
                    break
    assert any(live_marker in line for line in seen), seen


def test_strangers_and_unknown_members_get_404(database_url, owner, cluster):
    with live_user(database_url, "logs-other") as stranger:
        refused = httpx.get(f"{API_URL}{logs_path(cluster, 'server-1')}", headers=auth(stranger), timeout=30)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "CLUSTER_NOT_FOUND"
    missing = httpx.get(f"{API_URL}{logs_path(cluster, 'server-9')}", headers=auth(owner), timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "MEMBER_NOT_FOUND"
    bad = httpx.get(f"{API_URL}{logs_path(cluster, 'server-1')}", params={"tail": 10**6}, headers=auth(owner),
                    timeout=30)
    assert bad.status_code == 422
