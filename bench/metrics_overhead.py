#!/usr/bin/env python3
"""What metrics collection costs on an idle node, and the time-series database's disk use per member
per day (VictoriaMetrics' bytes per stored sample × the samples a member adds in a day).

The cost is attributed from process CPU accounting (/proc), which the rest of the machine does not
blur: the collectors' own processes (VictoriaMetrics, spindle-member-stats) over ``--seconds`` with
collection on, plus what answering scrapes costs the scraped processes (each service and the Mesos
master): their CPU time over ``--scrapes`` scrapes of ``/metrics``, made with collection off, per
scrape, times the scrapes a scrape interval makes. The whole machine's busy share with collection on
and off (VictoriaMetrics and member-stats stopped) is measured too, in ``--rounds`` alternations, and
reported as the median difference: it holds the platform's background noise as well.

Launches one static-web cluster of ``--members`` members (so there are members to collect) and waits
``--settle`` s first. One command (platform up, as root): ``.venv/bin/python
bench/metrics_overhead.py [--members 3] [--seconds 120] [--rounds 3]``; a row goes to
docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
from results import machine, record

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from live_platform import bench_user  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle"))
COLLECTORS = ("victoria-metrics", "member-stats")
COMMAND = ".venv/bin/python bench/metrics_overhead.py"
HEADING = "## Metrics collection overhead"
SERIES_PER_MEMBER = 9  # spindle_node_agent.member_stats: 7 figures + used and size of its one disk
TICK = os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields) - idle) / TICK, sum(fields) / TICK


def process_cpu(name: str) -> float:
    """CPU seconds the process ``deploy`` started as ``name`` (its pid file) has used so far."""
    pid = int((STATE / "run" / f"{name}.pid").read_text())
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / TICK


# What VictoriaMetrics scrapes (deploy/lib/metrics.sh): each service's /metrics and the Mesos master's.
SCRAPED = {"api-server": 8080, "orchestrator": 8081, "scheduler": 8082, "disk-service": 8083,
           "network-service": 8084, "mesos-master": 5050}
SCRAPE_INTERVAL_S = 15


def scrape_cost(token: str, scrapes: int) -> dict[str, float]:
    """CPU seconds each scraped process spends answering one scrape of its /metrics (the metrics
    token, as VictoriaMetrics sends it), from its CPU time over ``scrapes`` scrapes one after another."""
    cost = {}
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        for name, port in SCRAPED.items():
            client.get(f"http://127.0.0.1:{port}/metrics").raise_for_status()  # warm: imports, pools
            before = process_cpu(name)
            for _ in range(scrapes):
                client.get(f"http://127.0.0.1:{port}/metrics").raise_for_status()
            cost[name] = (process_cpu(name) - before) / scrapes
    return cost


def measure(seconds: float, processes: tuple[str, ...]) -> tuple[float, dict[str, float]]:
    """Share of the whole machine's CPU used over ``seconds``, and each process's share of it."""
    busy0, total0 = machine_busy()
    own0 = {p: process_cpu(p) for p in processes}
    time.sleep(seconds)
    busy1, total1 = machine_busy()
    total = total1 - total0
    return (busy1 - busy0) / total, {p: (process_cpu(p) - own0[p]) / total for p in processes}


def storage_per_sample(token: str) -> tuple[float, int]:
    """VictoriaMetrics' bytes on disk per stored sample, and the samples stored (its own /metrics)."""
    text = httpx.get("http://127.0.0.1:8428/metrics", auth=("spindle", token), timeout=10).text
    size = sum(float(v) for v in re.findall(r'^vm_data_size_bytes\{type="(?:storage|indexdb)/[^"]*"\} (\S+)$',
                                            text, re.MULTILINE))
    rows = sum(float(v) for v in re.findall(r'^vm_rows\{type="storage/[^"]*"\} (\S+)$', text, re.MULTILINE))
    return size / rows if rows else 0.0, int(rows)


def deploy(*steps: str) -> None:
    subprocess.run(["bash", "-c", f"source deploy/lib/common.sh; source deploy/lib/services.sh; "
                                  f"source deploy/lib/nodes.sh; source deploy/lib/metrics.sh; set -a; "
                                  f"source {STATE}/spindle.env; set +a; {'; '.join(steps)}"],
                   cwd=ROOT, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--members", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--settle", type=float, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scrapes", type=int, default=50)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    token = (STATE / "metrics-token").read_text().strip()
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    with bench_user() as client:
        cluster = client.launch("static-web", "1.0", {"roles": {"server": {"count": args.members, "cpus": 0.1,
                                                                           "disks": {"hdd": 1}}}})
        try:
            while (cluster := client.cluster(cluster))["state"] not in ("RUNNING", "FAILED"):
                time.sleep(1)
            if cluster["state"] != "RUNNING":
                raise SystemExit(f"static-web did not start: {cluster['reason']}")
            time.sleep(args.settle)
            ons, offs, owns = [], [], []
            for _ in range(args.rounds):
                on, own = measure(args.seconds, COLLECTORS)
                ons.append(on)
                owns.append(own)
                per_sample, samples = storage_per_sample(token)
                deploy("stop_victoria_metrics")
                try:
                    time.sleep(args.settle / 2)
                    off, _ = measure(args.seconds, ())
                    offs.append(off)
                    per_scrape = scrape_cost(token, args.scrapes)  # nothing else scrapes now
                finally:
                    deploy("ensure_victoria_metrics", "start_member_stats")
                time.sleep(args.settle / 2)
        finally:
            client.delete(cluster)
    cores = os.cpu_count() or 1
    own = {p: statistics.median(o[p] for o in owns) for p in COLLECTORS}
    scraped = sum(per_scrape.values()) / SCRAPE_INTERVAL_S / cores  # share of the machine
    attributed = sum(own.values()) + scraped
    differences = sorted(a - b for a, b in zip(ons, offs, strict=True))
    on, off, difference = statistics.median(ons), statistics.median(offs), statistics.median(differences)
    per_day = per_sample * SERIES_PER_MEMBER * 86400 / 15
    print(f"machine CPU busy: {on:.2%} collecting, {off:.2%} not (medians of {args.rounds}); median difference "
          f"{difference:+.2%} (each: {', '.join(f'{d:+.2%}' for d in differences)}) of {cores} cores")
    print("collectors' own share: " + ", ".join(f"{p} {v:.2%}" for p, v in own.items()))
    print("one scrape costs: " + ", ".join(f"{p} {v * 1000:.1f} ms" for p, v in per_scrape.items())
          + f" → {scraped:.2%} of the machine every {SCRAPE_INTERVAL_S} s")
    print(f"attributed to collection: {attributed:.2%} of the machine")
    print(f"VictoriaMetrics: {per_sample:.2f} bytes per sample over {samples} samples; "
          f"{SERIES_PER_MEMBER} series per member every 15 s → {per_day / 1024:.0f} KiB per member per day")
    if args.no_record:
        return
    command = COMMAND + "".join(f" --{name} {value:g}" for name, value, default in (
        ("members", args.members, 3), ("seconds", args.seconds, 120), ("settle", args.settle, 60),
        ("rounds", args.rounds, 3), ("scrapes", args.scrapes, 50)) if value != default)
    header = ("| measured (UTC) | members | attributed to collection | VictoriaMetrics + member-stats own | "
              "answering scrapes | machine CPU collecting / not (medians) | median difference | "
              "TSDB per member per day | machine | command |\n" + "|---" * 10 + "|")
    record(HEADING, header,
           f"| {started} | {args.members} | **{attributed:.2%}** | {sum(own.values()):.2%} "
           f"({', '.join(f'{v:.2%}' for v in own.values())}) | {scraped:.2%} "
           f"({sum(per_scrape.values()) * 1000:.0f} ms per {SCRAPE_INTERVAL_S} s) | {on:.2%} / {off:.2%} | "
           f"{difference:+.2%} | {per_day / 1024:.0f} KiB ({per_sample:.2f} B/sample) | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
