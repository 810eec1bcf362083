"""What ``spindle quota`` (your usage against your quota) and ``spindle admin quota list | show USER |
set USER --cpus … --ips …`` (admins) do; ``spindle admin nodes …`` is ``node_commands``."""
import argparse
import json
import sys
from typing import Any

from spindle_client import models
from spindle_client.client import SpindleClient, api_json
from spindle_client.node_commands import cmd_admin_nodes

SCALARS = ("clusters", "cpus", "mem_mb", "floating_ips")
DISK_CLASSES = ("hdd", "ssd", "nvme")
LIMITS = (*SCALARS, *(f"disks.{c}" for c in DISK_CLASSES))


def _number(value: float) -> str:
    return f"{value:g}"


def quota_rows(quota: models.Quota) -> list[tuple[str, str, str]]:
    """``(limit, used, quota)`` per limit; a quota that is the platform's default says so."""
    rows = []
    for name in LIMITS:
        if name.startswith("disks."):
            disk_class = name.split(".", 1)[1]
            used, limit = quota.usage.disks.get(disk_class, 0), quota.limits.disks.get(disk_class, 0)
        else:
            used, limit = getattr(quota.usage, name), getattr(quota.limits, name)
        rows.append((name, _number(used), _number(limit) + (" (default)" if name in quota.defaults else "")))
    return rows


def disk_limit(text: str) -> tuple[str, int]:
    """``hdd=4`` → ("hdd", 4) (an argparse type)."""
    disk_class, sep, count = text.partition("=")
    if not sep or disk_class not in DISK_CLASSES or not count.isdigit():
        raise argparse.ArgumentTypeError(f"expected CLASS=N with CLASS one of {', '.join(DISK_CLASSES)}, got {text!r}")
    return disk_class, int(count)


def merged_limits(quota: models.Quota, changes: dict[str, float | None], disks: list[tuple[str, int]],
                  reset: list[str]) -> dict[str, Any]:
    """The whole quota to PUT: the user's own limits kept, ``changes`` (scalars; None: not given) and
    ``disks`` applied, the limits named in ``reset`` back to the default (left out)."""
    unknown = sorted(set(reset) - set(LIMITS))
    if unknown:
        raise ValueError(f"--default takes {', '.join(LIMITS)}; not {', '.join(unknown)}")
    body: dict[str, Any] = {name: getattr(quota.limits, name) for name in SCALARS if name not in quota.defaults}
    own_disks = {c: quota.limits.disks[c] for c in DISK_CLASSES
                 if f"disks.{c}" not in quota.defaults and c in quota.limits.disks}
    body.update({name: value for name, value in changes.items() if value is not None})
    own_disks.update(dict(disks))
    for name in reset:
        body.pop(name, None)
        own_disks.pop(name.removeprefix("disks."), None)
    if own_disks:
        body["disks"] = own_disks
    return body


def _print_quota(args: argparse.Namespace, quota: models.Quota) -> None:
    if args.json:
        print(json.dumps(api_json(quota), indent=2))
        return
    print(f"quota of {quota.username}")
    print(f"{'LIMIT':<14}{'USED':<10}QUOTA")
    for name, used, limit in quota_rows(quota):
        print(f"{name:<14}{used:<10}{limit}")


def cmd_quota(args: argparse.Namespace, client: SpindleClient, _: str) -> int:
    """Your usage against your quota (``--user``: another user's, for admins)."""
    _print_quota(args, client.quota(args.user))
    return 0


def _usage(message: str) -> int:
    print(f"spindle: {message}", file=sys.stderr)
    return 2


def cmd_admin(args: argparse.Namespace, client: SpindleClient, _: str) -> int:
    """``spindle admin quota list | show USER | set USER [limits]``; ``spindle admin nodes …``."""
    if args.area == "nodes":
        return cmd_admin_nodes(args, client)
    if args.action == "set-rack" or args.rack is not None or args.clear:
        return _usage("'admin quota' takes no rack (see 'admin nodes set-rack NODE RACK')")
    if args.action == "list":
        if args.username:
            return _usage("'admin quota list' takes no user (see 'admin quota show USER')")
        quotas = client.quotas()
        if args.json:
            print(json.dumps(api_json(quotas), indent=2))
            return 0
        print(f"{'USER':<20}{'CLUSTERS':<12}{'CPUS':<14}{'MEM_MB':<16}{'FLOATING_IPS':<14}")
        for q in quotas:
            print(f"{q.username:<20}" + "".join(
                f"{_number(getattr(q.usage, n)) + '/' + _number(getattr(q.limits, n)):<{w}}"
                for n, w in (("clusters", 12), ("cpus", 14), ("mem_mb", 16), ("floating_ips", 14))))
        return 0
    if not args.username:
        return _usage(f"'admin quota {args.action}' needs the user's name")
    if args.action == "show":
        _print_quota(args, client.quota(args.username))
        return 0
    changes = {name: getattr(args, name) for name in SCALARS}
    if not any(v is not None for v in changes.values()) and not args.disk and not args.default:
        return _usage("'admin quota set' needs a limit: --clusters, --cpus, --mem-mb, --disk CLASS=N, --ips "
                      "or --default LIMIT")
    try:
        body = merged_limits(client.quota(args.username), changes, args.disk, args.default)
    except ValueError as exc:
        return _usage(str(exc))
    _print_quota(args, client.set_quota(args.username, body))
    return 0


def add_quota_commands(sub: Any, machine: argparse.ArgumentParser, api_command: Any) -> None:
    """``quota`` and ``admin`` on the CLI's subcommands."""
    quota = sub.add_parser("quota", parents=[machine], help="your usage against your quota")
    quota.add_argument("--user", help="another user's quota (admins)")
    quota.set_defaults(func=api_command(cmd_quota))
    admin = sub.add_parser("admin", parents=[machine], help="administration: users' quotas, nodes' racks",
                           usage="spindle admin quota [list | show USER | set USER [--clusters N] [--cpus X] "
                                 "[--mem-mb N] [--disk CLASS=N]... [--ips N] [--default LIMIT]...] [--json]\n"
                                 "       spindle admin nodes [list | show NODE | set-rack NODE (RACK | --clear)] "
                                 "[--json]")
    admin.add_argument("area", choices=["quota", "nodes"])
    admin.add_argument("action", nargs="?", choices=["list", "show", "set", "set-rack"], default="list")
    admin.add_argument("username", nargs="?", metavar="USER|NODE")
    admin.add_argument("rack", nargs="?", help="set-rack: the node's rack, its failure domain (e.g. rack-1)")
    admin.add_argument("--clear", action="store_true",
                       help="set-rack: take the node out of its rack (it is its own failure domain again)")
    limits = admin.add_argument_group("set", "limits to change; the user's other limits stay as they are")
    limits.add_argument("--clusters", type=int, help="clusters not destroyed (waiting ones count)")
    limits.add_argument("--cpus", type=float, help="cpus of every member")
    limits.add_argument("--mem-mb", dest="mem_mb", type=int, help="memory of every member, MiB")
    limits.add_argument("--disk", action="append", default=[], type=disk_limit, metavar="CLASS=N",
                        help="dedicated disks of a class (repeatable)")
    limits.add_argument("--ips", dest="floating_ips", type=int, help="floating IPs (one per member and job driver)")
    limits.add_argument("--default", action="append", default=[], metavar="LIMIT",
                        help=f"back to the platform's default (repeatable): {', '.join(LIMITS)}")
    admin.set_defaults(func=api_command(cmd_admin))
