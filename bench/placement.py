#!/usr/bin/env python3
"""Placement throughput of the pure placement code (no Mesos, no I/O).

One command: ``.venv/bin/python bench/placement.py``. Places 10,000 members (1,000 clusters × 10,
spread, 1 cpu / 1 GiB / one whole disk each: 8 hdd + 2 ssd per cluster) over 1,000 simulated nodes
× 12 disks (8 hdd + 4 ssd, 32 cpus, 128 GiB), one request after another on shared working copies
of the offers; prints decisions/s (median of 3 runs) and appends them, with the machine, to the
``## Placement`` table of docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime

from results import cpu_model, record

from spindle_scheduler.placement import MemberRequest, NodeOffer, OfferedDisk, PlacementRequest, place
from spindle_scheduler.placement.state import NodeState

HEADING = "## Placement"
TABLE_HEADER = ("| measured (UTC) | decisions/s, median of 3 | runs | placed | nproc | CPU | Python | command |\n"
                "|---|---|---|---|---|---|---|---|\n")


def offers(nodes: int) -> list[NodeOffer]:
    return [NodeOffer(f"node-{n}", 32.0, 131072.0,
                      [OfferedDisk(f"node-{n}/hdd{i}", "hdd", 4e6, f"/mnt/hdd{i}") for i in range(8)] +
                      [OfferedDisk(f"node-{n}/ssd{i}", "ssd", 1e6, f"/mnt/ssd{i}") for i in range(4)])
            for n in range(nodes)]


def requests(clusters: int) -> list[PlacementRequest]:
    return [PlacementRequest(f"c{c}", [MemberRequest(f"c{c}-m{i}", "worker", 1.0, 1024.0,
                                                     {"ssd" if i >= 8 else "hdd": 1}) for i in range(10)])
            for c in range(clusters)]


def one_run(nodes: int, clusters: int) -> tuple[float, int]:
    node_offers, work = offers(nodes), requests(clusters)
    states = [NodeState.of(o) for o in node_offers]
    started = time.perf_counter()
    placed = sum(len(place(r, node_offers, states).placements) for r in work)
    return time.perf_counter() - started, placed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-record", action="store_true", help="print only; do not touch docs/BENCHMARKS.md")
    args = parser.parse_args()
    runs = [one_run(args.nodes, args.clusters) for _ in range(args.runs)]
    rates = [placed / seconds for seconds, placed in runs]
    result = {"nodes": args.nodes, "disks": args.nodes * 12, "members": args.clusters * 10, "placed": runs[0][1],
              "decisions_per_s_median": round(statistics.median(rates)), "runs": [round(r) for r in rates],
              "nproc": len(os.sched_getaffinity(0)), "cpu": cpu_model(), "python": platform.python_version()}
    print(json.dumps(result))
    if not args.no_record:
        default = (args.nodes, args.clusters, args.runs) == (1000, 1000, 3)
        command = ".venv/bin/python bench/placement.py" + (
            "" if default else f" --nodes {args.nodes} --clusters {args.clusters} --runs {args.runs}")
        record(HEADING, TABLE_HEADER,
               f"| {datetime.now(UTC):%Y-%m-%d %H:%M} | **{result['decisions_per_s_median']:,}** | "
               f"{' · '.join(f'{r:,}' for r in result['runs'])} | {result['placed']:,} of {result['members']:,} | "
               f"{result['nproc']} | {result['cpu']} | {result['python']} | `{command}` |")


if __name__ == "__main__":
    main()
