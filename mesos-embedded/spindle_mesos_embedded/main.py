"""``spindle-mesos-embedded``: run the embedded master + agent.

Environment: ``SPINDLE_MESOS_PORT`` (5050), ``SPINDLE_MESOS_WORK_DIR``, ``SPINDLE_MESOS_RESOURCES``
(agent ``--resources`` JSON: a file path or an http URL such as disk-service's
``/nodes/<node>/mesos-resources``, called with ``SPINDLE_INTERNAL_TOKEN``), ``SPINDLE_AGENT_CPUS`` /
``SPINDLE_AGENT_MEM_MB`` (override what the resources say; default: this machine's)."""
import json
import logging
import os
import socket

import httpx
import uvicorn

from spindle_mesos_embedded.app import build_app
from spindle_mesos_embedded.master import Master


def machine_mem_mb() -> int:
    with open("/proc/meminfo") as meminfo:
        kib = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal:"))
    return kib // 1024


def resource_loader(source: str, token: str):
    """Reads the agent's resources each allocation round (so disk state changes show up)."""

    def load() -> list[dict]:
        if not source:
            loaded = []
        elif source.startswith("http"):
            headers = {"Authorization": f"Bearer {token}", "X-Spindle-Actor": "mesos-agent",
                       "X-Spindle-Role": "service"}
            loaded = httpx.get(source, headers=headers, timeout=5).raise_for_status().json()
        else:
            with open(source) as f:
                loaded = json.load(f)
        cpus = float(os.environ.get("SPINDLE_AGENT_CPUS") or 0) or next(
            (r["scalar"]["value"] for r in loaded if r["name"] == "cpus"), float(os.cpu_count() or 1))
        mem = float(os.environ.get("SPINDLE_AGENT_MEM_MB") or 0) or next(
            (r["scalar"]["value"] for r in loaded if r["name"] == "mem"), float(machine_mem_mb()))
        rest = [r for r in loaded if r["name"] not in ("cpus", "mem")]
        return [{"name": "cpus", "type": "SCALAR", "scalar": {"value": cpus}},
                {"name": "mem", "type": "SCALAR", "scalar": {"value": mem}}, *rest]

    return load


def run() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    port = int(os.environ.get("SPINDLE_MESOS_PORT", "5050"))
    work_dir = os.environ.get("SPINDLE_MESOS_WORK_DIR", "/var/lib/spindle/mesos")
    resources = resource_loader(os.environ.get("SPINDLE_MESOS_RESOURCES", ""),
                                os.environ.get("SPINDLE_INTERNAL_TOKEN", ""))
    master = Master(f"127.0.0.1:{port}", os.environ.get("SPINDLE_NODE_NAME") or socket.gethostname(), work_dir,
                    resources)
    uvicorn.run(build_app(master), host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=2,
                # pymesos keeps one connection for all its calls, as Mesos allows: do not drop it when idle.
                timeout_keep_alive=24 * 3600)
