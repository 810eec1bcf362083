"""The engine cluster's backend member: a status endpoint over its agents (cluster mode).

  python -m spindle_engine.status --bind IP --port 8090 --agents HOST:PORT[,HOST:PORT...]

GET / answers JSON: per agent whether it answers, its cores, memory, disks and how much its file
server has served, and the data locality of the stages drivers ran (`locality`). (The planner
and scheduler run in each job's driver; see engine/README.md.)

Drivers POST each stage's locality counts to /locality (`report_locality`), signed with the
cluster secret (HMAC-SHA256 of the body in `X-Spindle-Signature`) when the cluster has one.
"""

import argparse
import hashlib
import hmac
import json
import os
import threading
import time
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .auth import secret_from_env
from .backend.remote import AgentConnection
from .errors import EngineError

MAX_REPORT_BYTES = 4096
KEPT_STAGES = 50
REPORT_MAX_AGE_S = 300
SIGNATURE = "X-Spindle-Signature"


def agent_status(address):
    try:
        agent = AgentConnection(address)
    except EngineError as e:
        return {"address": address, "reachable": False, "error": str(e)}
    try:
        info = agent.info
        return {"address": address, "reachable": True, "host": info.host, "cores": info.cores,
                "memory_bytes": info.memory, "work_dirs": info.work_dirs,
                "file_server": info.file_server, **agent.stats()}
    except EngineError as e:
        return {"address": address, "reachable": False, "error": str(e)}
    finally:
        agent.close()


def sign(secret, body):
    """Hex HMAC-SHA256 of a report's body."""
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def report_locality(driver, entry, url=None, secret=None):
    """Tell the cluster's status member a stage's locality counts (best effort: a driver never
    fails for it). `url` defaults to env SPINDLE_ENGINE_STATUS (set for Spindle jobs)."""
    url = url or os.environ.get("SPINDLE_ENGINE_STATUS")
    if not url:
        return
    secret = secret if secret is not None else secret_from_env()
    body = json.dumps({"driver": driver, "at": time.time(), **entry}).encode()
    request = urllib.request.Request(url.rstrip("/") + "/locality", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    if secret:
        request.add_header(SIGNATURE, sign(secret, body))
    try:
        urllib.request.urlopen(request, timeout=2).close()
    except OSError:
        pass


class Locality:
    """The last stages drivers reported, and the totals since the member started."""

    def __init__(self):
        self.stages = deque(maxlen=KEPT_STAGES)
        self.totals = {"node_local": 0, "any": 0}
        self.lock = threading.Lock()

    def add(self, report):
        with self.lock:
            self.stages.append(report)
            for level in self.totals:
                self.totals[level] += report[level]

    def view(self):
        with self.lock:
            return {**self.totals, "stages": list(self.stages)}


def parse_report(body, secret, signature, now):
    """The report in a POST /locality body, or (status, message) when it is refused."""
    if secret and not hmac.compare_digest(sign(secret, body), signature or ""):
        return None, (403, "bad or missing signature")
    try:
        report = json.loads(body)
    except ValueError:
        return None, (400, "not JSON")
    if not isinstance(report, dict):
        return None, (400, "expected an object")
    fields = {"driver": str, "stage": str, "node_local": int, "any": int, "at": (int, float)}
    for name, kind in fields.items():
        value = report.get(name)
        if not isinstance(value, kind) or isinstance(value, bool) \
                or (kind is int and value < 0):
            return None, (400, f"field {name} missing or invalid")
    if abs(now - report["at"]) > REPORT_MAX_AGE_S:
        return None, (400, "report too old (or from the future)")
    return {name: report[name] for name in fields}, None


class _Handler(BaseHTTPRequestHandler):
    def _answer(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path not in ("/", "/status"):
            self.send_error(404, "try /")
            return
        agents = [agent_status(a) for a in self.server.agents]
        self._answer(200, {"agents": agents, "reachable": sum(a["reachable"] for a in agents),
                           "locality": self.server.locality.view()})

    def do_POST(self):  # noqa: N802 - http.server's name
        if self.path != "/locality":
            self._answer(404, {"error": "POST /locality only"})
            return
        try:
            length = int(self.headers.get("Content-Length") or "")
        except ValueError:
            length = -1
        if not 0 < length <= MAX_REPORT_BYTES:
            self._answer(400 if length <= 0 else 413, {"error": "bad Content-Length"})
            return
        body = self.rfile.read(length)
        report, refusal = parse_report(body, self.server.secret, self.headers.get(SIGNATURE),
                                       time.time())
        if refusal is not None:
            self._answer(refusal[0], {"error": refusal[1]})
            return
        self.server.locality.add(report)
        self._answer(200, {"kept": True})

    def log_message(self, *args):
        pass


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--agents", required=True)
    args = p.parse_args(argv)
    server = ThreadingHTTPServer((args.bind, args.port), _Handler)
    server.agents = [a for a in args.agents.split(",") if a]
    server.secret = secret_from_env()
    server.locality = Locality()
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
