#!/usr/bin/env python3
"""Launch and delete latency of whole clusters through the public REST API on the running platform.

One command (platform up, run as root): ``.venv/bin/python bench/cluster_latency.py``. For each
product — static-web with 3 members (lightweight) and Spark with 1 master + 2 workers × 2 disks —
it launches and deletes a cluster 5 times, one after another, as a user of its own, and reports the
median time from ``POST /products/...`` to ``RUNNING`` and from ``DELETE`` to ``DESTROYED`` (every
container gone, IPs freed; disks are then wiped in the background). Side by side, in the same run:
the same 3 static-web containers started with plain ``docker run`` and waited for (the floor any
platform on this Docker pays). Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import socket
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import docker
from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import read_env_file  # noqa: E402
from tests.support.live_users import live_user  # noqa: E402

HEADING = "## Cluster launch and delete latency"
TABLE_HEADER = ("| measured (UTC) | cluster | POST → RUNNING, median (runs) | DELETE → DESTROYED, median | "
                "plain `docker run` of the same containers | ratio | machine | command |\n"
                "|---|---|---|---|---|---|---|---|\n")
PRODUCTS = {
    "static-web 1.0, 3 members × 1 disk": ("static-web", "1.0", {"roles": {"server": {"count": 3}}}),
    "spark 3.5, 1 master + 2 workers × 2 disks": ("spark", "3.5",
                                                  {"roles": {"worker": {"count": 2, "disks": {"hdd": 2}}}}),
}


def wait_state(client, cluster: dict, states: tuple[str, ...], timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while (cluster := client.cluster(cluster))["state"] not in states:
        if time.monotonic() > deadline:
            raise SystemExit(f"cluster {cluster['id']} stuck in {cluster['state']}")
        time.sleep(0.1)
    return cluster


def wait_disks_free(client, cluster: dict) -> None:
    """Before the next launch: the previous cluster's disks are wiped and free again."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(d["free"] == d["total"] for d in client.capacity()):
            return
        time.sleep(0.2)


def launch_and_delete(client, product: str, version: str, options: dict) -> tuple[float, float]:
    started = time.monotonic()
    cluster = client.launch(product, version, options)
    cluster = wait_state(client, cluster, ("RUNNING", "FAILED"))
    launched = time.monotonic() - started
    if cluster["state"] != "RUNNING":
        raise SystemExit(f"launch failed: {cluster['reason_code']}: {cluster['reason']}")
    started = time.monotonic()
    client.delete(cluster)
    wait_state(client, cluster, ("DESTROYED",))
    deleted = time.monotonic() - started
    wait_disks_free(client, cluster)
    return launched, deleted


def plain_docker_run(image: str, count: int) -> float:
    """Start ``count`` containers serving HTTP on a bridge and wait until each port answers."""
    client = docker.from_env()
    label = {"io.spindle.owned": "true", "io.spindle.bench": uuid.uuid4().hex[:8]}
    started = time.monotonic()
    containers = [client.containers.run(image, ["python3", "-m", "http.server", "8000"], detach=True, labels=label,
                                        nano_cpus=500_000_000, mem_limit="128m") for _ in range(count)]
    try:
        for container in containers:
            container.reload()
            ip = container.attrs["NetworkSettings"]["IPAddress"]
            while True:
                try:
                    socket.create_connection((ip, 8000), timeout=0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
        return time.monotonic() - started
    finally:
        for container in containers:
            container.remove(force=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", choices=["static-web", "spark"])
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    with live_user(env["SPINDLE_DATABASE_URL"], "bench") as client:
        for name, (product, version, options) in PRODUCTS.items():
            if args.only and args.only != product:
                continue
            runs = [launch_and_delete(client, product, version, options) for _ in range(args.runs)]
            launch = statistics.median(r[0] for r in runs)
            delete = statistics.median(r[1] for r in runs)
            baseline = statistics.median(plain_docker_run(env["SPINDLE_BASE_IMAGE"], 3) for _ in range(args.runs)) \
                if product == "static-web" else None
            result = {"cluster": name, "launch_s": [round(r[0], 2) for r in runs],
                      "delete_s": [round(r[1], 2) for r in runs], "plain_docker_s": baseline}
            print(json.dumps(result))
            if args.no_record:
                continue
            command = ".venv/bin/python bench/cluster_latency.py" + (f" --runs {args.runs}" if args.runs != 5 else "")
            ratio = f"{launch / baseline:.1f}×" if baseline else "–"
            record(HEADING, TABLE_HEADER,
                   f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {name} | **{launch:.1f} s** "
                   f"({' · '.join(f'{r[0]:.1f}' for r in runs)}) | **{delete:.1f} s** | "
                   f"{f'{baseline:.2f} s' if baseline else 'n/a'} | {ratio} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
