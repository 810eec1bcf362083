"""The engine cluster's backend member: a status endpoint over its agents (cluster mode).

  python -m spindle_engine.status --bind IP --port 8090 --agents HOST:PORT[,HOST:PORT...]

GET / answers JSON: per agent whether it answers, its cores, memory, disks and how much its file
server has served. (The planner and scheduler run in each job's driver; see engine/README.md.)
"""

import argparse
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .backend.remote import AgentConnection
from .errors import EngineError


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


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path not in ("/", "/status"):
            self.send_error(404, "try /")
            return
        agents = [agent_status(a) for a in self.server.agents]
        body = json.dumps({"agents": agents,
                           "reachable": sum(a["reachable"] for a in agents)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

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
    print(f"READY {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
