"""The ``spindle`` command line."""
import argparse
import json
import os
import sys
from dataclasses import asdict

import httpx

from spindle_client.status import service_statuses


def cmd_status(args: argparse.Namespace) -> int:
    """Print every service with its Consul health; exit 1 unless all pass."""
    try:
        statuses = service_statuses(args.consul_url)
    except httpx.HTTPError as exc:
        print(f"spindle: cannot reach Consul at {args.consul_url}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([asdict(s) for s in statuses], indent=2))
    else:
        print(f"{'SERVICE':<18}{'HEALTH':<10}{'ADDRESS':<22}DETAIL")
        for s in statuses:
            print(f"{s.name:<18}{s.status:<10}{','.join(s.instances) or '-':<22}{s.detail}")
    return 0 if all(s.status == "passing" for s in statuses) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spindle", description="Spindle: big-data clusters on dedicated disks.")
    parser.add_argument("--consul-url", default=os.environ.get("SPINDLE_CONSUL_URL", "http://127.0.0.1:8500"))
    sub = parser.add_subparsers(dest="command", required=True)
    status = sub.add_parser("status", help="show every service and its Consul health")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(func=cmd_status)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))
