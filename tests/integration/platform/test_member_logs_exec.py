"""A member's logs and commands run in it, through the public API on the running platform (one
static-web cluster for both).

Logs: a static-web member's request log (python's http.server writes one line per request to stderr)
read as the last lines, and live as SSE while a request is made. Exec: a command's output streamed
with its exit code, as the member's own user within its limits (no capability to make a device
node), killed at its timeout with the processes it started, recorded for the owner and admins.
Others' clusters and unknown members are 404 for both (the CLI's `spindle logs` and `spindle exec`
run in test_documented_commands)."""
import json
import shlex
import threading
import time

import httpx
import pytest

from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import running_cluster

LAUNCH = {"roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True}


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "logs") as client:
        yield client


@pytest.fixture(scope="module")
def cluster(owner):
    with running_cluster(owner, "static-web", "1.0", LAUNCH) as running:
        yield running


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


# --- exec ---------------------------------------------------------------------------------------

def exec_path(cluster: dict, member: str) -> str:
    return f"/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/members/{member}/exec"


def run(client, cluster: dict, command: list[str], member: str = "server-1", timeout_s: int = 60) -> dict:
    """stdout, stderr and the last line of an exec (``end``), read from its NDJSON stream."""
    found: dict = {"stdout": "", "stderr": "", "end": None}
    with httpx.stream("POST", f"{API_URL}{exec_path(cluster, member)}", json={"command": command,
                      "timeout_s": timeout_s}, headers=auth(client), timeout=httpx.Timeout(30, read=120)) as answer:
        assert answer.status_code == 200, answer.read()
        assert answer.headers["content-type"].startswith("application/x-ndjson")
        for line in answer.iter_lines():
            if line:
                data = json.loads(line)
                if "stream" in data:
                    found[data["stream"]] += data["data"]
                else:
                    assert found["end"] is None, ("a line after the end", data)
                    found["end"] = data
    return found


def test_exec_streams_the_output_and_exit_code_as_the_members_user(owner, cluster):
    done = run(owner, cluster, ["sh", "-c", "id -u; echo to-err >&2; exit 3"])
    assert done == {"stdout": "65534\n", "stderr": "to-err\n", "end": {"exit_code": 3}}, done
    # By the member's id too; an argv is passed as it is (no shell splits or expands it).
    done = run(owner, cluster, ["echo", "$HOME", "a  b"], member=cluster["members"][0]["member_id"])
    assert done["stdout"] == "$HOME a  b\n" and done["end"] == {"exit_code": 0}, done
    # Within the member's limits: no capability to make a device node, none to raise its user.
    done = run(owner, cluster, ["sh", "-c", "mknod /tmp/mem c 1 1 && echo MADE; su -c id 0 2>&1; exit 0"])
    assert "MADE" not in done["stdout"], done
    assert "Operation not permitted" in done["stderr"] + done["stdout"], done


def test_exec_is_killed_at_its_timeout_with_what_it_started(owner, cluster):
    # A background child and the foreground one, each with a sleep time no other process has.
    seconds = 3000 + time.time_ns() % 997
    done = run(owner, cluster, ["sh", "-c", f"sleep {seconds} & sleep {seconds + 1}"], timeout_s=2)
    assert done["end"]["timed_out"] is True, done
    listing = "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done"
    deadline, left = time.monotonic() + 15, "?"
    while time.monotonic() < deadline:
        left = run(owner, cluster, ["sh", "-c", listing])["stdout"]
        if f"sleep {seconds}" not in left:
            break
        time.sleep(1)
    assert f"sleep {seconds}" not in left and f"sleep {seconds + 1}" not in left, \
        f"the timed-out command's processes live on: {shlex.quote(left)}"


def test_exec_refuses_strangers_unknown_members_and_bad_commands(database_url, owner, cluster):
    with live_user(database_url, "exec-other") as stranger:
        refused = httpx.post(f"{API_URL}{exec_path(cluster, 'server-1')}", json={"command": ["id"]},
                             headers=auth(stranger), timeout=30)
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "CLUSTER_NOT_FOUND"
        records = httpx.get(f"{API_URL}/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/execs",
                            headers=auth(stranger), timeout=30)
        assert records.status_code == 404
        assert httpx.get(f"{API_URL}/admin/execs", headers=auth(stranger), timeout=30).status_code == 403
    missing = httpx.post(f"{API_URL}{exec_path(cluster, 'server-9')}", json={"command": ["id"]},
                         headers=auth(owner), timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "MEMBER_NOT_FOUND"
    for body in ({"command": []}, {"command": [""]}, {"command": ["id"], "timeout_s": 0},
                 {"command": ["a\x00b"]}, {"command": ["id"], "tty": True}):
        bad = httpx.post(f"{API_URL}{exec_path(cluster, 'server-1')}", json=body, headers=auth(owner), timeout=30)
        assert bad.status_code == 422, (body, bad.text)


def test_every_exec_is_recorded_for_the_owner_and_admins(database_url, owner, cluster):
    marker = f"recorded-{time.time_ns()}"
    assert run(owner, cluster, ["echo", marker])["end"] == {"exit_code": 0}
    answer = httpx.get(f"{API_URL}/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/execs",
                       headers=auth(owner), timeout=30)
    assert answer.status_code == 200, answer.text
    [record] = [r for r in answer.json() if r["command"] == ["echo", marker]]
    assert record["username"] == owner.username and record["exit_code"] == 0 and record["finished_at"]
    assert record["member_id"] == cluster["members"][0]["member_id"]
    with live_user(database_url, "exec-admin", is_admin=True) as admin:
        every = httpx.get(f"{API_URL}/admin/execs", params={"owner": owner.username}, headers=auth(admin), timeout=30)
        assert every.status_code == 200 and any(r["command"] == ["echo", marker] for r in every.json()), every.text
