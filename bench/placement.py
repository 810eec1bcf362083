#!/usr/bin/env python3
"""Placement throughput of the pure placement code (no Mesos, no I/O).

One command: ``.venv/bin/python bench/placement.py``. Places 10,000 members (1,000 clusters × 10,
spread, 1 cpu / 1 GiB / one whole disk each: 8 hdd + 2 ssd per cluster) over 1,000 simulated nodes
× 12 disks (8 hdd + 4 ssd, 32 cpus, 128 GiB); prints decisions/s, median of 3 runs.
"""
import argparse
import json
import platform
import statistics
import time

from spindle_scheduler.placement import MemberRequest, NodeOffer, PlacementRequest, place
from spindle_scheduler.placement.model import OfferedDisk
from spindle_scheduler.placement.state import NodeState


def offers(nodes: int) -> list[NodeOffer]:
    return [NodeOffer(f"node-{n}", 32.0, 131072.0,
                      [OfferedDisk(f"node-{n}/hdd{i}", "hdd") for i in range(8)] +
                      [OfferedDisk(f"node-{n}/ssd{i}", "ssd") for i in range(4)]) for n in range(nodes)]


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
    args = parser.parse_args()
    runs = [one_run(args.nodes, args.clusters) for _ in range(args.runs)]
    rates = [placed / seconds for seconds, placed in runs]
    print(json.dumps({"nodes": args.nodes, "disks": args.nodes * 12, "members": args.clusters * 10,
                      "placed": runs[0][1], "decisions_per_s_median": round(statistics.median(rates)),
                      "runs": [round(r) for r in rates], "python": platform.python_version()}))


if __name__ == "__main__":
    main()
