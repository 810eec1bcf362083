"""``spindle exec CLUSTER_ID MEMBER [--timeout S] -- COMMAND [ARGS...]``: run a command in one of
your members (its id or its name in the cluster, e.g. worker-1), its output printed as it comes
(stdout to stdout, stderr to stderr), exiting with the command's exit code (124 when it was killed
at its timeout). ``spindle execs CLUSTER_ID``: the record of commands run in a cluster's members."""
import argparse
import json
import sys
from typing import Any

from spindle_client.client import SpindleClient, api_json

TIMED_OUT_EXIT = 124  # as coreutils' timeout


def cmd_exec(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    if not args.args:
        print("spindle: exec needs a command after '--' (e.g. spindle exec ID worker-1 -- df -h /data/1)",
              file=sys.stderr)
        return 2
    cluster = client.find_cluster(username, args.cluster_id)
    end: dict[str, Any] = {}
    for stream, data in client.exec(cluster, args.member, args.args, timeout_s=args.timeout):
        if stream == "exit":
            end = data
        elif args.json:
            print(json.dumps({"stream": stream, "data": data}), flush=True)
        else:
            out = sys.stdout if stream == "stdout" else sys.stderr
            out.write(data)
            out.flush()
    if args.json:
        print(json.dumps(end))
    if end.get("timed_out"):
        print(f"spindle: killed after {args.timeout} s (--timeout)", file=sys.stderr)
        return TIMED_OUT_EXIT
    if end.get("truncated"):
        print("spindle: killed for writing more output than an exec may (16 MiB)", file=sys.stderr)
    code = end.get("exit_code")
    return code if isinstance(code, int) and 0 <= code <= 255 else 1


def cmd_execs(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    records = client.execs(client.find_cluster(username, args.cluster_id), limit=args.limit)
    if args.json:
        print(json.dumps([api_json(record) for record in records], indent=2))
        return 0
    print(f"{'ID':<7}{'STARTED':<22}{'BY':<14}{'MEMBER':<34}{'EXIT':<8}COMMAND")
    for record in records:
        ended = ("running" if record.finished_at is None else
                 "timeout" if record.timed_out else
                 str(record.exit_code) if record.exit_code is not None else (record.error or "-"))
        print(f"{record.id:<7}{str(record.started_at)[:19].replace('T', ' '):<22}{record.username:<14}"
              f"{record.member_id:<34}{ended:<8}{' '.join(record.command)}")
    return 0


def add_exec_commands(sub: Any, machine: argparse.ArgumentParser, api_command: Any) -> None:
    run = sub.add_parser(
        "exec", parents=[machine], help="run a command in one of your members",
        usage="spindle exec [-h] CLUSTER_ID MEMBER [--timeout S] [--json] [--user USER] -- COMMAND [ARGS...]",
        description="The command runs in the member's container as its own user, within its limits; no shell "
                    "unless you name one (-- sh -c '...'). Recorded: spindle execs CLUSTER_ID.")
    run.add_argument("cluster_id")
    run.add_argument("member", help="the member's id or its name in the cluster (worker-1)")
    run.add_argument("args", nargs="*", help="the command and its arguments (after --)")
    run.add_argument("--timeout", type=int, default=300, help="seconds it may run, then it is killed (default 300)")
    run.add_argument("--user", help="the cluster's owner (admins)")
    run.set_defaults(func=api_command(cmd_exec))
    records = sub.add_parser("execs", parents=[machine], help="commands run in a cluster's members")
    records.add_argument("cluster_id")
    records.add_argument("--limit", type=int, default=100, help="the newest N (default 100)")
    records.add_argument("--user", help="the cluster's owner (admins)")
    records.set_defaults(func=api_command(cmd_execs))
