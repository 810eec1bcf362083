"""``spindle datasets``: your datasets (disks a deleted cluster kept with their data), and
``spindle datasets reclaim NAME`` to wipe one. Admins: ``--all`` lists everyone's, ``--user`` acts
on another user's."""
import argparse
import json
import sys
from typing import Any

from spindle_client.client import SpindleClient, api_json


def cmd_datasets(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    if args.action == "reclaim":
        if not args.name:
            print("spindle: datasets reclaim needs the dataset's NAME", file=sys.stderr)
            return 2
        reclaimed = client.reclaim_dataset(username, args.name)
        print(json.dumps(api_json(reclaimed), indent=2) if args.json else
              f"reclaimed dataset {reclaimed.name} ({reclaimed.id}): its disks are being wiped")
        return 0
    found = client.all_datasets(args.include_ended) if args.all else client.datasets(username, args.include_ended)
    if args.json:
        print(json.dumps(api_json(found), indent=2))
        return 0
    print(f"{'NAME':<24}{'STATE':<10}{'PRODUCT':<16}{'DISKS':<16}{'OWNER':<14}{'FROM':<14}ATTACHED TO")
    for d in found:
        disks = " ".join(f"{c}:{n}" for c, n in sorted(d.disks.items())) or "-"
        print(f"{d.name:<24}{d.state:<10}{f'{d.product} {d.version}':<16}{disks:<16}{d.owner:<14}"
              f"{d.source_cluster:<14}{d.attached_to or '-'}")
    return 0


def add_dataset_commands(sub: Any, machine: argparse.ArgumentParser, api_command: Any) -> None:
    datasets = sub.add_parser("datasets", parents=[machine], help="your datasets (kept disks); reclaim one",
                              usage="spindle datasets [list | reclaim NAME] [--all] [--include-ended] [--user USER]")
    datasets.add_argument("action", nargs="?", choices=["list", "reclaim"], default="list")
    datasets.add_argument("name", nargs="?", help="the dataset to reclaim")
    datasets.add_argument("--all", action="store_true", help="every user's (admins)")
    datasets.add_argument("--include-ended", action="store_true", help="also datasets already wiped")
    datasets.add_argument("--user", help="another user's (admins)")
    datasets.set_defaults(func=api_command(cmd_datasets))
