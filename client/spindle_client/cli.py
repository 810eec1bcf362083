"""The ``spindle`` command line: platform status, sign-in, the catalog and your clusters.
Human output by default; ``--json`` prints the API's answers as they are."""
import argparse
import getpass
import json
import os
import sys
from dataclasses import asdict

import httpx

from spindle_client import credentials
from spindle_client.client import SpindleClient, SpindleError
from spindle_client.commands import (
    cmd_clusters,
    cmd_delete,
    cmd_events,
    cmd_jobs,
    cmd_launch,
    cmd_products,
    cmd_resize,
    cmd_show,
    cmd_start,
    cmd_stop,
    cmd_submit,
    launch_options,
    role_count,
)
from spindle_client.dataset_commands import add_dataset_commands
from spindle_client.exec_commands import add_exec_commands
from spindle_client.logs_commands import add_logs_command
from spindle_client.quota_commands import add_quota_commands
from spindle_client.status import service_statuses
from spindle_client.token_commands import cmd_tokens, duration_s
from spindle_client.top_commands import add_top_command


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


class _IntermixedParser(argparse.ArgumentParser):
    """A command's parser that also takes options between and after its positionals
    (``spindle submit <id> main.py --wait``): argparse's intermixed parsing, also as a subcommand."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # parse_known_intermixed_args calls back here for its two passes
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spindle", description="Spindle: big-data clusters on dedicated disks.")
    parser.add_argument("--consul-url", default=os.environ.get("SPINDLE_CONSUL_URL", "http://127.0.0.1:8500"))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_IntermixedParser)
    status = sub.add_parser("status", help="show every service and its Consul health")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.set_defaults(func=cmd_status)

    login = sub.add_parser("login", help="check and store the API address and your token")
    login.add_argument("--url", default=os.environ.get("SPINDLE_URL", "http://127.0.0.1:8080"))
    login.add_argument("--token", help="your API token (asked for when not given)")
    login.set_defaults(func=cmd_login)

    # Of the subcommands' class, as typeshed wants of parents= (a parent only lends its arguments: never parses).
    machine = _IntermixedParser(add_help=False)
    machine.add_argument("--json", action="store_true", help="machine-readable output")
    products = sub.add_parser("products", parents=[machine], help="list the catalog")
    products.set_defaults(func=api_command(cmd_products))
    launch = sub.add_parser("launch", parents=[machine], help="launch a product")
    launch.add_argument("product")
    launch.add_argument("version")
    launch.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE", type=_opt,
                        help="a launch option, dotted keys nest (e.g. roles.worker.count=3); JSON values")
    launch.add_argument("--idempotency-key", help="repeat a launch safely: the same key gives the same cluster")
    launch.add_argument("--plan", action="store_true", help="only show where the members would be placed")
    placement = launch.add_argument_group("placement", "where the members may go (options.placement; --plan too)")
    placement.add_argument("--strategy", choices=["spread", "pack"],
                           help="spread (default): members on different nodes where they fit; pack: fill nodes up")
    placement.add_argument("--anti-affinity", action="append", default=[], metavar="ROLE",
                           help="a role whose members must each be on a different node (repeatable)")
    placement.add_argument("--prefer-node", action="append", default=[], metavar="NODE",
                           help="a node tried first (repeatable)")
    placement.add_argument("--exclude-node", action="append", default=[], metavar="NODE",
                           help="a node never used (repeatable)")
    launch.add_argument("--dataset", metavar="NAME",
                        help="attach your dataset NAME: members of the same role and index take over its disks")
    launch.add_argument("--follow", action="store_true", help="then follow its progress until it settles")
    launch.set_defaults(func=api_command(cmd_launch))
    clusters = sub.add_parser("clusters", parents=[machine], help="list your clusters")
    clusters.add_argument("--state")
    clusters.add_argument("--product")
    clusters.add_argument("--user", help="another user's clusters (admins)")
    clusters.set_defaults(func=api_command(cmd_clusters))
    for name, func, text in (("show", cmd_show, "show a cluster"), ("events", cmd_events, "a cluster's timeline"),
                             ("delete", cmd_delete, "destroy a cluster (--keep-disks: keep its disks as a dataset)"),
                             ("stop", cmd_stop, "stop a cluster: containers stop, disks and floating IPs are kept"),
                             ("start", cmd_start, "start a stopped cluster again on its kept disks")):
        command = sub.add_parser(name, parents=[machine], help=text)
        command.add_argument("cluster_id")
        command.add_argument("--user", help="the cluster's owner (admins)")
        if name in ("events", "stop", "start"):
            command.add_argument("--follow", action="store_true", help="live progress until the cluster settles")
        if name == "delete":
            command.add_argument("--keep-disks", action="store_true",
                                 help="keep the members' disks, data and all, as a dataset of yours")
            command.add_argument("--dataset", help="the dataset's name (default: the cluster's id)")
            command.add_argument("--force", action="store_true",
                                 help="delete it even though other clusters of yours are bound to it")
        command.set_defaults(func=api_command(func))
    resize = sub.add_parser("resize", parents=[machine], help="change how many members of a role a running cluster has",
                            usage="spindle resize CLUSTER_ID ROLE=COUNT [ROLE=COUNT ...] [--plan] [--follow] [--json]")
    resize.add_argument("cluster_id")
    resize.add_argument("counts", nargs="+", type=role_count, metavar="ROLE=COUNT", help="e.g. worker=4")
    resize.add_argument("--plan", action="store_true", help="only show where added members would go")
    resize.add_argument("--follow", action="store_true", help="then follow it until it settles")
    resize.add_argument("--user", help="the cluster's owner (admins)")
    resize.set_defaults(func=api_command(cmd_resize))
    submit = sub.add_parser(
        "submit", parents=[machine], help="run a driver program against a running cluster",
        usage="spindle submit [-h] CLUSTER_ID MAIN [--file FILE]... [--wait] [--json] [--user USER] [-- ARGS...]",
        description="Options may come before, between or after CLUSTER_ID and MAIN; everything after '--' "
                    "goes to the program as it is (also words that start with '-').")
    submit.add_argument("cluster_id")
    submit.add_argument("main", help="the driver program, e.g. wordcount.py")
    submit.add_argument("args", nargs="*", help="its arguments (put them after --)")
    submit.add_argument("--file", action="append", default=[], help="another file it needs (.py, .so, data)")
    submit.add_argument("--wait", action="store_true", help="wait for the end, print its output, exit like it")
    submit.add_argument("--user", help="the cluster's owner (admins)")
    submit.set_defaults(func=api_command(cmd_submit))
    jobs = sub.add_parser("jobs", parents=[machine], help="a cluster's jobs, or one job with its logs")
    jobs.add_argument("cluster_id")
    jobs.add_argument("job_id", nargs="?")
    jobs.add_argument("--user", help="the cluster's owner (admins)")
    jobs.set_defaults(func=api_command(cmd_jobs))
    tokens = sub.add_parser("tokens", parents=[machine], help="your API tokens: list, create one, revoke one",
                            usage="spindle tokens [list | create [--expires-in 7d] | revoke ID] [--user USER] [--json]")
    tokens.add_argument("action", nargs="?", choices=["list", "create", "revoke"], default="list")
    tokens.add_argument("token_id", nargs="?", type=int, help="the token to revoke (its id in the list)")
    tokens.add_argument("--expires-in", type=duration_s, metavar="DURATION",
                        help="create: how long the new token works (e.g. 12h, 7d; at most the platform's lifetime)")
    tokens.add_argument("--user", help="another user's tokens, to list or revoke (admins)")
    tokens.set_defaults(func=api_command(cmd_tokens))
    add_quota_commands(sub, machine, api_command)
    add_top_command(sub, machine, api_command)
    add_logs_command(sub, machine, api_command)
    add_exec_commands(sub, machine, api_command)
    add_dataset_commands(sub, machine, api_command)
    return parser


def _opt(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def cmd_login(args: argparse.Namespace) -> int:
    """Check the token against the API, then store URL and token for the other commands."""
    token = args.token or getpass.getpass("API token: ")
    try:
        with SpindleClient(args.url, token) as client:
            me = client.me()
    except SpindleError as exc:
        print(f"spindle: login failed: {exc}", file=sys.stderr)
        return 1
    path = credentials.save(credentials.Credentials(url=args.url, token=token, username=me.username))
    print(f"logged in to {args.url} as {me.username} (saved in {path})")
    return 0


def api_command(func):
    """Run ``func(args, client, username)`` with the stored credentials; API errors become exit code 1."""

    def run(args: argparse.Namespace) -> int:
        creds = credentials.load()
        if creds is None:
            print("spindle: not logged in: run 'spindle login' (or set SPINDLE_URL and SPINDLE_TOKEN)", file=sys.stderr)
            return 2
        try:
            with SpindleClient(creds.url, creds.token) as client:
                username = getattr(args, "user", None) or creds.username or client.me().username
                return func(args, client, username)
        except SpindleError as exc:
            print(f"spindle: {exc}", file=sys.stderr)
            for problem in exc.details.get("errors", []):
                print(f"  {problem.get('path', problem.get('field', ''))}: "
                      f"{problem.get('message', problem.get('problem', ''))}", file=sys.stderr)
            return 1

    return run


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line as arguments. ``submit`` and ``exec`` take their options anywhere (before,
    between or after their positionals), and everything after the first ``--`` is the program's
    arguments (``exec``: the command), verbatim."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if "--" in argv and _command_of(argv[:argv.index("--")]) in ("submit", "exec"):
        split = argv.index("--")
        args = parser.parse_args(argv[:split])
        args.args = [*args.args, *argv[split + 1:]]
        return args
    return parser.parse_args(argv)


def _command_of(argv: list[str]) -> str | None:
    """The command word of a command line (its first word that is not a global option or its value)."""
    words = iter(argv)
    for word in words:
        if word == "--consul-url":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if getattr(args, "opt", None) is not None:
        try:
            args.options = launch_options(args)
        except ValueError as exc:
            build_parser().error(str(exc))
    sys.exit(args.func(args))
