"""What ``spindle logs CLUSTER_ID MEMBER [--tail N] [--since UNIX] [--follow]`` prints: a member's log
lines (its id or its name in the cluster, e.g. worker-1), each with its time; following, new lines
as they are written until the member's container ends (Ctrl-C stops earlier)."""
import argparse
from typing import Any

from spindle_client.client import SpindleClient


def cmd_logs(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    cluster = client.find_cluster(username, args.cluster_id)
    if args.follow:
        for line in client.follow_member_logs(cluster, args.member, tail=args.tail):
            print(line, flush=True)
        return 0
    print(client.member_logs(cluster, args.member, tail=args.tail, since=args.since), end="")
    return 0


def add_logs_command(sub: Any, machine: argparse.ArgumentParser, api_command: Any) -> None:
    logs = sub.add_parser("logs", parents=[machine], help="a member's log lines (--follow: live)")
    logs.add_argument("cluster_id")
    logs.add_argument("member", help="the member's id or its name in the cluster (worker-1)")
    logs.add_argument("--tail", type=int, default=200, help="the last N lines (default 200, at most 10000)")
    logs.add_argument("--since", type=float, help="lines from this unix time on")
    logs.add_argument("--follow", action="store_true", help="then new lines as they come, until the member ends")
    logs.add_argument("--user", help="the cluster's owner (admins)")
    logs.set_defaults(func=api_command(cmd_logs))
