"""What ``spindle top CLUSTER_ID`` prints: each member's latest figures (CPU, memory against its limit,
disk reads and writes, network, bytes used on its dedicated disks), from the same series the cluster
page charts (``GET …/metrics``)."""
import argparse
import json
import time
from typing import Any

from spindle_client import models
from spindle_client.client import SpindleClient, api_json

COLUMNS = (("MEMBER", 28), ("CPU", 7), ("MEMORY", 19), ("DISK R/W /s", 19), ("NET RX/TX /s", 19), ("DISKS USED", 0))


def human(size: float) -> str:
    """Bytes as a short IEC figure: 512B, 1.5K, 20M, 3.2G."""
    for unit in ("B", "K", "M", "G", "T"):
        if abs(size) < 1024 or unit == "T":
            return f"{size:.0f}{unit}" if unit == "B" or size >= 100 else f"{size:.1f}{unit}"
        size /= 1024
    return f"{size:.1f}T"  # not reached


def latest(metrics: models.ClusterMetrics) -> dict[str, dict[str, Any]]:
    """member -> figure -> its last value (``disk_used``/``disk_size``: by disk)."""
    rows: dict[str, dict[str, Any]] = {}
    for series in metrics.series:
        if not series.points:
            continue
        value = series.points[-1].root[1]
        row = rows.setdefault(series.member, {})
        figure = str(series.figure)
        if figure in ("disk_used", "disk_size"):
            row.setdefault(figure, {})[series.disk or ""] = value
        else:
            row[figure] = value
    return rows


def top_rows(metrics: models.ClusterMetrics) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for member, row in sorted(latest(metrics).items()):
        limit = row.get("memory_limit")
        memory = human(row.get("memory", 0)) + (f"/{human(limit)}" if limit else "")
        disks = " ".join(f"{disk}:{human(used)}/{human(row.get('disk_size', {}).get(disk, 0))}"
                         for disk, used in sorted(row.get("disk_used", {}).items())) or "-"
        rows.append((member, f"{row.get('cpu', 0):.2f}", memory,
                     f"{human(row.get('disk_read', 0))}/{human(row.get('disk_write', 0))}",
                     f"{human(row.get('network_receive', 0))}/{human(row.get('network_transmit', 0))}", disks))
    return rows


def _print(rows: list[tuple[str, ...]]) -> None:
    print("".join(f"{name:<{width}}" if width else name for name, width in COLUMNS))
    for row in rows:
        print("".join(f"{value:<{width}}" if width else value for value, (_, width) in zip(row, COLUMNS, strict=True)))


def cmd_top(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """The members' latest figures; with ``--watch S``, again every S seconds until interrupted."""
    cluster = client.find_cluster(username, args.cluster_id)
    while True:
        metrics = client.metrics(cluster, minutes=5, step=15)
        if args.json:
            print(json.dumps(api_json(metrics), indent=2))
        else:
            rows = top_rows(metrics)
            _print(rows)
            if not rows:
                print("(no figures yet: members report every 15 s)")
        if not args.watch:
            return 0
        time.sleep(args.watch)
        print()


def add_top_command(sub: Any, machine: argparse.ArgumentParser, api_command: Any) -> None:
    top = sub.add_parser("top", parents=[machine], help="a cluster's members: CPU, memory, disk and network now")
    top.add_argument("cluster_id")
    top.add_argument("--user", help="the cluster's owner (admins)")
    top.add_argument("--watch", type=float, metavar="SECONDS", help="print again every SECONDS")
    top.set_defaults(func=api_command(cmd_top))
