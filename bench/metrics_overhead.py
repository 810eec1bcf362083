#!/usr/bin/env python3
"""What metrics collection costs on an idle node: CPU (whole machine, and the collectors' own
processes) with collection on, then with it off (VictoriaMetrics and spindle-member-stats stopped:
nothing scrapes or pushes), same length, same members; and the time-series database's disk use per
member per day (VictoriaMetrics' bytes per stored sample × the samples a member adds in a day).

Launches one static-web cluster of ``--members`` members (so there are members to collect) and waits
``--settle`` s, then measures ``--seconds`` s on each side. One command (platform up, as root):
``.venv/bin/python bench/metrics_overhead.py [--members 3] [--seconds 180]``; a row goes to
docs/BENCHMARKS.md (``--no-record`` only prints).
"""
import argparse
import os
import re
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
    pid = int((STATE / "run" / f"{name}.pid").read_text())
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(stat[11]) + int(stat[12])) / TICK


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
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument("--settle", type=float, default=60)
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
            on, own = measure(args.seconds, COLLECTORS)
            per_sample, samples = storage_per_sample(token)
            deploy("stop_victoria_metrics")
            try:
                time.sleep(args.settle / 2)
                off, _ = measure(args.seconds, ())
            finally:
                deploy("ensure_victoria_metrics", "start_member_stats")
        finally:
            client.delete(cluster)
    cores = os.cpu_count() or 1
    per_day = per_sample * SERIES_PER_MEMBER * 86400 / 15
    print(f"machine CPU busy: {on:.2%} collecting, {off:.2%} not; difference {on - off:+.2%} of {cores} cores")
    print("collectors' own share: " + ", ".join(f"{p} {v:.2%}" for p, v in own.items()))
    print(f"VictoriaMetrics: {per_sample:.2f} bytes per sample over {samples} samples; "
          f"{SERIES_PER_MEMBER} series per member every 15 s → {per_day / 1024:.0f} KiB per member per day")
    if args.no_record:
        return
    command = COMMAND + "".join(f" --{name} {value:g}" for name, value, default in (
        ("members", args.members, 3), ("seconds", args.seconds, 180), ("settle", args.settle, 60)) if value != default)
    header = ("| measured (UTC) | members | seconds per side | machine CPU collecting | not collecting | difference "
              "| VictoriaMetrics + member-stats own | TSDB per member per day | machine | command |\n"
              + "|---" * 10 + "|")
    record(HEADING, header,
           f"| {started} | {args.members} | {args.seconds:g} | {on:.2%} | {off:.2%} | **{on - off:+.2%}** | "
           f"{sum(own.values()):.2%} ({', '.join(f'{v:.2%}' for v in own.values())}) | "
           f"{per_day / 1024:.0f} KiB ({per_sample:.2f} B/sample) | {machine()} | `{command}` |")


if __name__ == "__main__":
    main()
