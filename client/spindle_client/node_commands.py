"""What ``spindle admin nodes [list | show NODE | set-rack NODE RACK | set-rack NODE --clear]`` (admins)
does: the node inventory with each node's rack, its failure domain (none set: the node itself), which
placement spreads a cluster's replicas over."""
import argparse
import json
import sys

from spindle_client import models
from spindle_client.client import SpindleClient, api_json

NODE_ACTIONS = ("list", "show", "set-rack")


def node_rows(nodes: list[models.Node]) -> list[tuple[str, str, str, str, str, str]]:
    """``(name, address, cpus, mem_mb, rack, failure domain)`` per node; ``-`` where none is set."""
    def given(value: object) -> str:
        return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)

    return [(n.name, n.address, given(n.cpus), given(n.mem_mb), given(n.rack), n.failure_domain) for n in nodes]


def _print_nodes(args: argparse.Namespace, nodes: list[models.Node]) -> None:
    if args.json:
        print(json.dumps(api_json(nodes), indent=2))
        return
    print(f"{'NODE':<20}{'ADDRESS':<18}{'CPUS':<8}{'MEM_MB':<10}{'RACK':<16}FAILURE DOMAIN")
    for name, address, cpus, mem_mb, rack, domain in node_rows(nodes):
        print(f"{name:<20}{address:<18}{cpus:<8}{mem_mb:<10}{rack:<16}{domain}")


def _usage(message: str) -> int:
    print(f"spindle: {message}", file=sys.stderr)
    return 2


def cmd_admin_nodes(args: argparse.Namespace, client: SpindleClient) -> int:
    """``spindle admin nodes list | show NODE | set-rack NODE RACK | set-rack NODE --clear``."""
    if args.action not in NODE_ACTIONS:
        return _usage(f"'admin nodes' takes {', '.join(NODE_ACTIONS)}; not {args.action}")
    if args.action == "list":
        if args.username or args.rack:
            return _usage("'admin nodes list' takes no node (see 'admin nodes show NODE')")
        _print_nodes(args, client.nodes())
        return 0
    if not args.username:
        return _usage(f"'admin nodes {args.action}' needs the node's name")
    if args.action == "show":
        _print_nodes(args, [client.node(args.username)])
        return 0
    if (args.rack is None) == (not args.clear):
        return _usage("'admin nodes set-rack NODE' needs a RACK or --clear (one of them)")
    _print_nodes(args, [client.set_rack(args.username, None if args.clear else args.rack)])
    return 0
