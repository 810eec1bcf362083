"""Entry points.

``spindle-mesos-embedded``: the master. ``SPINDLE_MESOS_HOST`` (127.0.0.1) / ``SPINDLE_MESOS_PORT``
(5050) it listens on, ``SPINDLE_MESOS_WORK_DIR`` (its agent registry), ``SPINDLE_MESOS_AGENT_TIMEOUT_S``
(15: seconds without an agent heartbeat before the agent is unreachable),
``SPINDLE_MESOS_AGENT_HEARTBEAT_S`` (default a third of the timeout), ``SPINDLE_INTERNAL_TOKEN``
(agents must present it), ``SPINDLE_MESOS_CREDENTIALS`` (a Mesos ``--credentials`` JSON file:
frameworks and operator calls must authenticate with one of its principals; unset: no
authentication). Single-node compatibility: when the agent settings
``SPINDLE_MESOS_RESOURCES`` / ``SPINDLE_AGENT_CPUS`` / ``SPINDLE_AGENT_MEM_MB`` are set on the master,
it also runs one local agent as its child (loopback, work dir ``<work dir>/agent``) that lives and
dies with it, executors included — one process to start and stop, as before the split.

``spindle-mesos-agent``: an agent. ``SPINDLE_MESOS_MASTER`` (host:port, 127.0.0.1:5050),
``SPINDLE_AGENT_HOST`` (127.0.0.1: listened on, advertised to the master and executors) /
``SPINDLE_AGENT_PORT`` (5051; 0 = any free port), ``SPINDLE_MESOS_WORK_DIR`` (sandboxes and
checkpoints), ``SPINDLE_MESOS_RESOURCES`` (agent ``--resources`` JSON: a file path or an http URL
such as disk-service's ``/nodes/<node>/mesos-resources``, called with ``SPINDLE_INTERNAL_TOKEN``;
re-read every second), ``SPINDLE_NODE_NAME`` (its hostname in offers), ``SPINDLE_AGENT_CPUS`` /
``SPINDLE_AGENT_MEM_MB`` (override what the resources say; default: this machine's, less
``SPINDLE_AGENT_RESERVED_MEM_MB``, 1024, kept for the platform itself),
``SPINDLE_MESOS_AGENT_HEARTBEAT_S`` (default: what the master asks). SIGTERM stops the agent and
leaves its executors running (a new agent on the same work dir recovers them); SIGUSR1 stops them
too and unregisters.
"""
import asyncio
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable

import httpx
import uvicorn

from spindle_common.auth import internal_headers
from spindle_common.metrics import DEV_METRICS_TOKEN
from spindle_common.tls import default_tls
from spindle_mesos_embedded.agent import Agent
from spindle_mesos_embedded.agent_app import build_agent_app
from spindle_mesos_embedded.app import build_app, load_credentials
from spindle_mesos_embedded.master import Master

log = logging.getLogger("spindle.mesos")
LOCAL_AGENT_SETTINGS = ("SPINDLE_MESOS_RESOURCES", "SPINDLE_AGENT_CPUS", "SPINDLE_AGENT_MEM_MB")
# pymesos keeps one connection for all its calls, as Mesos allows: do not drop it when idle.
KEEP_ALIVE_S = 24 * 3600


def machine_mem_mb() -> int:
    with open("/proc/meminfo") as meminfo:
        kib = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:"))
    return kib // 1024


# Memory the node keeps for the platform itself (dockerd, the agent, executors, services): taken off
# the machine's memory before it is offered. An explicit SPINDLE_AGENT_MEM_MB is offered as it is.
DEFAULT_RESERVED_MEM_MB = 1024


def reserved_mem_mb() -> float:
    value = os.environ.get("SPINDLE_AGENT_RESERVED_MEM_MB", "").strip()
    return max(float(value), 0.0) if value else float(DEFAULT_RESERVED_MEM_MB)


def resource_loader(source: str, token: str):
    """Reads the agent's resources (each call: disk state changes show up)."""

    def load() -> list[dict]:
        if not source:
            loaded = []
        elif source.startswith("http"):
            # As its node (…/nodes/<node>/mesos-resources), signed with the nodes' key SPINDLE_NODE_IDENTITY_KEY.
            node = source.rstrip("/").split("/")[-2]
            headers = internal_headers(token, f"mesos-agent/{node}", "node")
            loaded = httpx.get(source, headers=headers, timeout=5, verify=default_tls()).raise_for_status().json()
        else:
            with open(source) as f:
                loaded = json.load(f)
        cpus = float(os.environ.get("SPINDLE_AGENT_CPUS") or 0) or next(
            (r["scalar"]["value"] for r in loaded if r["name"] == "cpus"), float(os.cpu_count() or 1))
        machine = next((r["scalar"]["value"] for r in loaded if r["name"] == "mem"), float(machine_mem_mb()))
        mem = float(os.environ.get("SPINDLE_AGENT_MEM_MB") or 0) or max(machine - reserved_mem_mb(), 0.0)
        rest = [r for r in loaded if r["name"] not in ("cpus", "mem")]
        return [{"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus}},
                {"name": "mem", "type": "SCALAR", "scalar": {"value": mem}}, *rest]

    return load


class Server(uvicorn.Server):
    """uvicorn, ending the app's event streams as soon as it stops accepting connections: they never
    end by themselves and would hold the graceful shutdown until its timeout (their subscribers —
    executors, agents, frameworks — reconnect to the next process)."""

    def __init__(self, config: uvicorn.Config, close_streams: Callable[[], None]):
        super().__init__(config)
        self.close_streams = close_streams

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in self.servers:
            server.close()
        self.close_streams()
        await super().shutdown(sockets)


def _logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not every heartbeat


def _die_with_parent() -> None:
    """In the local agent's child process: an explicit shutdown (SIGUSR1) when the master dies,
    even by SIGKILL (PR_SET_PDEATHSIG)."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGUSR1)


def start_local_agent(master: str, work_dir: str) -> subprocess.Popen | None:
    if not any(os.environ.get(name) for name in LOCAL_AGENT_SETTINGS):
        return None
    env = {**os.environ, "SPINDLE_MESOS_MASTER": master, "SPINDLE_AGENT_HOST": "127.0.0.1",
           "SPINDLE_AGENT_PORT": os.environ.get("SPINDLE_AGENT_PORT", "0"),
           "SPINDLE_MESOS_WORK_DIR": os.path.join(work_dir, "agent")}
    return subprocess.Popen([sys.executable, "-c", "from spindle_mesos_embedded.main import run_agent; run_agent()"],
                            env=env, preexec_fn=_die_with_parent)


def stop_local_agent(child: subprocess.Popen) -> None:
    child.send_signal(signal.SIGUSR1)
    try:
        child.wait(12)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def bound(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    return sock


def run() -> None:
    """``spindle-mesos-embedded``: the master (and, for single-node settings, its local agent)."""
    _logging()
    host = os.environ.get("SPINDLE_MESOS_HOST") or "127.0.0.1"
    port = int(os.environ.get("SPINDLE_MESOS_PORT", "5050"))
    work_dir = os.environ.get("SPINDLE_MESOS_WORK_DIR", "/var/lib/spindle/mesos")
    timeout = float(os.environ.get("SPINDLE_MESOS_AGENT_TIMEOUT_S") or 15)
    heartbeat = float(os.environ.get("SPINDLE_MESOS_AGENT_HEARTBEAT_S") or 0) or None
    master = Master(f"{host}:{port}", os.path.join(work_dir, "master"), timeout, heartbeat)
    reachable = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    child = start_local_agent(f"{reachable}:{port}", work_dir)
    if child:
        # uvicorn raises the signal that stopped it again once it is done: let that return here, so
        # the local agent is shut down (its executors included) before the master exits.
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: None)
    credentials_file = os.environ.get("SPINDLE_MESOS_CREDENTIALS", "")
    credentials = load_credentials(credentials_file) if credentials_file else None
    app = build_app(master, os.environ.get("SPINDLE_INTERNAL_TOKEN", ""), credentials,
                    os.environ.get("SPINDLE_METRICS_TOKEN") or DEV_METRICS_TOKEN)
    config = uvicorn.Config(app, host=host, port=port,
                            log_level="warning", timeout_graceful_shutdown=2, timeout_keep_alive=KEEP_ALIVE_S)
    # SPINDLE_EXTRA_HOSTS: more addresses to listen on (e.g. the node fabric's), as every service.
    extra = [h.strip() for h in os.environ.get("SPINDLE_EXTRA_HOSTS", "").split(",") if h.strip() and h.strip() != host]
    sockets = [bound(h, port) for h in [host, *dict.fromkeys(extra)]] if extra else None
    try:
        Server(config, master.close_streams).run(sockets=sockets)
    finally:
        if child:
            stop_local_agent(child)


def run_agent() -> None:
    """``spindle-mesos-agent``."""
    _logging()
    host = os.environ.get("SPINDLE_AGENT_HOST") or "127.0.0.1"
    sock = bound(host, int(os.environ.get("SPINDLE_AGENT_PORT", "5051")))  # bound first: port 0 picks one
    token = os.environ.get("SPINDLE_INTERNAL_TOKEN", "")
    agent = Agent(os.environ.get("SPINDLE_MESOS_MASTER") or "127.0.0.1:5050", host, sock.getsockname()[1],
                  os.environ.get("SPINDLE_NODE_NAME") or socket.gethostname(),
                  os.environ.get("SPINDLE_MESOS_WORK_DIR", "/var/lib/spindle/mesos-agent"),
                  resource_loader(os.environ.get("SPINDLE_MESOS_RESOURCES", ""), token), token,
                  float(os.environ.get("SPINDLE_MESOS_AGENT_HEARTBEAT_S") or 0) or None)
    agent.recover()
    server = Server(uvicorn.Config(build_agent_app(agent), log_level="warning", timeout_graceful_shutdown=2,
                                   timeout_keep_alive=KEEP_ALIVE_S), agent.close_streams)

    async def shutdown() -> None:
        await agent.shutdown()
        server.should_exit = True

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(shutdown()))
        log.info("agent %s serving executors on %s, master %s", agent.hostname, agent.endpoint, agent.master)
        await server.serve(sockets=[sock])

    asyncio.run(serve())
