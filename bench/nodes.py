#!/usr/bin/env python3
"""Spindle on simulated nodes vs on this machine alone, in one run; and node-loss recovery.

One command (platform up, run as root, nothing else running): ``.venv/bin/python bench/nodes.py``.

1. **1 node**: static-web with 3 members launched and deleted ``--runs`` times on this machine's own
   agent (the default pool): median POST → RUNNING.
2. **3 nodes**: the same on three simulated nodes (``deploy/node``: own netns, dockerd, disks and
   agents; this machine's agent stopped, IPs from the `fabric` pool), spread one member per node.
3. **Node loss**: a static-web cluster of 2 members with anti-affinity; the node of one is killed
   (``deploy/node kill``: every process at once); measured until the member runs on the third node
   and answers at its same floating IP; the node is started again and its disks wiped before the
   next round.

Rows go to docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import read_env_file  # noqa: E402
from tests.support.live_users import live_user  # noqa: E402
from tests.support.nodes import member_page, node_disks, sh, simulated_nodes, wait_for  # noqa: E402

HEADING = "## Many nodes (simulated)"
TABLE_HEADER = ("| measured (UTC) | static-web 3 members POST → RUNNING, 1 node: median (runs) "
                "| 3 nodes: median (runs) | 3 nodes / 1 node "
                "| node loss → member answers at its IP on another node: median (runs) | machine | command |\n"
                "|---|---|---|---|---|---|---|\n")
NODES = ("n1", "n2", "n3")


def launch_and_delete(client, options: dict) -> float:
    started = time.monotonic()
    cluster = client.launch("static-web", "1.0", options)
    cluster = wait_for("RUNNING", lambda: (c := client.cluster(cluster))["state"] in ("RUNNING", "FAILED") and c, 300,
                       every=0.1)
    took = time.monotonic() - started
    if cluster["state"] != "RUNNING":
        raise SystemExit(f"launch failed: {cluster['reason_code']}: {cluster['reason']}")
    client.delete(cluster)
    wait_for("DESTROYED", lambda: client.cluster(cluster)["state"] == "DESTROYED", 300)
    wait_for("disks free", lambda: all(d["free"] == d["total"] for d in client.capacity()), 180)
    return took


def node_loss(client, token: str) -> float:
    options = {"roles": {"server": {"count": 2}}, "placement": {"anti_affinity": ["server"]}}
    cluster = client.launch("static-web", "1.0", options)
    cluster = wait_for("RUNNING", lambda: (c := client.cluster(cluster))["state"] in ("RUNNING", "FAILED") and c, 300)
    assert cluster["state"] == "RUNNING", cluster
    victim = cluster["members"][0]
    dead = victim["node"]
    started = time.monotonic()
    sh("deploy/node", "kill", dead)

    def answering() -> bool:
        member = next(m for m in client.cluster(cluster)["members"] if m["member_id"] == victim["member_id"])
        return member["node"] not in (None, dead) and f"of {cluster['id']}</h1>" in member_page(victim["ip"])
    wait_for("the member answering on another node", answering, 300, every=0.1)
    took = time.monotonic() - started
    client.delete(cluster)
    wait_for("DESTROYED", lambda: client.cluster(cluster)["state"] == "DESTROYED", 300)
    sh("deploy/node", "start", dead)
    wait_for("every node's disks free", lambda: all(
        d["state"] == "free" for n in NODES for d in node_disks(token, n)), 300)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--losses", type=int, default=3)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    options = {"roles": {"server": {"count": 3}}}
    with live_user(env["SPINDLE_DATABASE_URL"], "benchnodes") as client:
        one = [launch_and_delete(client, options) for _ in range(args.runs)]
        with simulated_nodes(NODES):
            three = [launch_and_delete(client, {**options, "placement": {"strategy": "spread"}})
                     for _ in range(args.runs)]
            losses = [node_loss(client, env["SPINDLE_INTERNAL_TOKEN"]) for _ in range(args.losses)]
    result = {"one_node_s": [round(x, 2) for x in one], "three_nodes_s": [round(x, 2) for x in three],
              "node_loss_s": [round(x, 2) for x in losses]}
    print(json.dumps(result))
    if args.no_record:
        return

    def cell(values: list[float]) -> str:
        return f"**{statistics.median(values):.1f} s** ({' · '.join(f'{v:.1f}' for v in values)})"
    command = ".venv/bin/python bench/nodes.py" + (f" --runs {args.runs}" if args.runs != 5 else "") + (
        f" --losses {args.losses}" if args.losses != 3 else "")
    record(HEADING, TABLE_HEADER,
           f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | {cell(one)} | {cell(three)} | "
           f"{statistics.median(three) / statistics.median(one):.2f}× | {cell(losses)} | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
