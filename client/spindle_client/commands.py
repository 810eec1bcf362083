"""What the ``spindle`` cluster commands do, given parsed arguments and a signed-in client."""
import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from spindle_client.client import SpindleClient


def parse_opts(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``[("roles.worker.count", "3")]`` → ``{"roles": {"worker": {"count": 3}}}``; values are JSON
    when they parse as JSON, strings otherwise. A key set twice, or set both as a value and as a
    parent of another key, is an error."""
    options: dict[str, Any] = {}
    for key, raw in pairs:
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        *parents, leaf = key.split(".")
        if not all([*parents, leaf]):
            raise ValueError(f"option {key!r} has an empty part")
        node = options
        for i, part in enumerate(parents):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"option {key!r}: {'.'.join(parents[:i + 1])} is already set to a value")
        if leaf in node:
            raise ValueError(f"option {key!r} is given twice (or conflicts with a nested key)")
        node[leaf] = value
    return options


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))


def _print_cluster(cluster: dict[str, Any]) -> None:
    print(f"cluster  {cluster['id']}  {cluster['product']} {cluster['version']}  owner {cluster['owner']}")
    reason = f"  ({cluster['reason_code']}: {cluster['reason']})" if cluster.get("reason_code") else ""
    print(f"state    {cluster['state']}{reason}")
    members = cluster.get("members") or []
    if members:
        print(f"{'MEMBER':<28}{'ROLE':<10}{'STATE':<14}{'NODE':<14}{'IP':<16}{'DISKS':<7}DNS")
        for m in members:
            print(f"{m['member_id']:<28}{m['role']:<10}{m['state']:<14}{m.get('node') or '-':<14}"
                  f"{m.get('ip') or '-':<16}{len(m.get('disks') or []):<7}{m.get('dns_name') or '-'}")


def _event_line(event: dict[str, Any]) -> str:
    who = event.get("member_id") or "cluster"
    return f"{event['at'][11:19]}  {who:<28}{event['step']:<14}{event['state']:<18}{event['message']}"


def cmd_products(args: argparse.Namespace, client: SpindleClient, _: str) -> int:
    products = client.products()
    if args.json:
        _print_json(products)
        return 0
    print(f"{'PRODUCT':<14}{'VERSION':<9}{'ROLES':<18}DESCRIPTION")
    for p in products:
        print(f"{p['name']:<14}{p['version']:<9}{','.join(p['roles']):<18}{p['description']}")
    return 0


def cmd_launch(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    if args.plan:
        plan = client.plan(args.product, args.version, args.options)
        _print_json(plan)
        return 0
    cluster = client.launch(args.product, args.version, args.options, args.idempotency_key)
    if args.json and not args.follow:
        _print_json(cluster)
        return 0
    print(f"launched {cluster['id']} ({cluster['product']} {cluster['version']}): {cluster['state']}")
    return _follow(args, client, cluster) if args.follow else 0


def cmd_clusters(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    clusters = list(client.clusters(username, state=args.state, product=args.product))
    if args.json:
        _print_json(clusters)
        return 0
    print(f"{'ID':<24}{'PRODUCT':<18}{'STATE':<14}{'MEMBERS':<9}CREATED")
    for c in clusters:
        print(f"{c['id']:<24}{c['product'] + ' ' + c['version']:<18}{c['state']:<14}{len(c['members']):<9}"
              f"{c['created_at'][:19]}")
    return 0


def cmd_show(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    cluster = client.cluster(client.find_cluster(username, args.cluster_id))
    _print_json(cluster) if args.json else _print_cluster(cluster)
    return 0


def cmd_events(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    cluster = client.find_cluster(username, args.cluster_id)
    if args.follow:
        return _follow(args, client, cluster)
    events = client.events(cluster)
    if args.json:
        _print_json(events)
    else:
        for event in events:
            print(_event_line(event))
    return 0


def cmd_delete(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    cluster = client.delete(client.find_cluster(username, args.cluster_id))
    _print_json(cluster) if args.json else print(f"deleting {cluster['id']}: {cluster['state']}")
    return 0


JOB_FINISHED = ("SUCCEEDED", "FAILED", "KILLED")


def cmd_submit(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """Submit a driver program; with --wait, wait for its end, print its output and exit like it."""
    cluster = client.find_cluster(username, args.cluster_id)
    job = client.submit(cluster, Path(args.main), [Path(f) for f in args.file], args.args)
    if not args.wait:
        _print_json(job) if args.json else print(f"submitted {job['id']} to {cluster['id']}: {job['state']}")
        return 0
    while job["state"] not in JOB_FINISHED:
        time.sleep(1)
        job = client.job(cluster, job["id"])
    return _print_job(args, client.job(cluster, job["id"]))


def cmd_jobs(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    cluster = client.find_cluster(username, args.cluster_id)
    if args.job_id:
        return _print_job(args, client.job(cluster, args.job_id), exit_like_job=False)
    jobs = client.jobs(cluster)
    if args.json:
        _print_json(jobs)
        return 0
    print(f"{'JOB':<14}{'STATE':<11}{'EXIT':<6}{'MAIN':<24}MESSAGE")
    for j in jobs:
        print(f"{j['id']:<14}{j['state']:<11}{j['exit_code'] if j['exit_code'] is not None else '-':<6}"
              f"{j['main']:<24}{j['message']}")
    return 0


def _print_job(args: argparse.Namespace, job: dict[str, Any], exit_like_job: bool = True) -> int:
    if args.json:
        _print_json(job)
    else:
        print(job["stdout"], end="")
        print(job["stderr"], end="", file=sys.stderr)
        print(f"job {job['id']}: {job['state']} ({job['message']})", file=sys.stderr)
    return (0 if job["state"] == "SUCCEEDED" else 1) if exit_like_job else 0


def _follow(args: argparse.Namespace, client: SpindleClient, cluster: dict[str, Any]) -> int:
    """Print events as they happen; exit 0 when the cluster settles RUNNING or DESTROYED, 1 if FAILED."""
    settled = cluster
    for kind, data in client.follow_events(cluster):
        if kind == "end":
            settled = data
        elif args.json:
            print(json.dumps(data), flush=True)
        else:
            print(_event_line(data), flush=True)
    if not args.json:
        reason = f" ({settled['reason_code']}: {settled['reason']})" if settled.get("reason_code") else ""
        print(f"{settled['id']} is {settled['state']}{reason}")
    return 1 if settled["state"] == "FAILED" else 0
