"""What the ``spindle`` cluster commands do, given parsed arguments and a signed-in client."""
import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from spindle_client import models
from spindle_client.client import SpindleClient, api_json


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


# The launch command's placement flags → the keys they fill in the ``placement`` option.
PLACEMENT_FLAGS = {"strategy": "strategy", "anti_affinity": "anti_affinity", "prefer_node": "preferred_nodes",
                   "exclude_node": "excluded_nodes"}


def launch_options(args: argparse.Namespace) -> dict[str, Any]:
    """The launch's options: the ``--opt`` pairs, ``--dataset`` as ``dataset``, and the placement flags
    (``--strategy``, ``--anti-affinity``, ``--prefer-node``, ``--exclude-node``) in ``placement``. A key
    set both ways is an error; a name repeated counts once."""
    options = parse_opts(args.opt)
    if getattr(args, "dataset", None):
        if "dataset" in options:
            raise ValueError("dataset is given both with --opt and with --dataset")
        options["dataset"] = args.dataset
    given = {key: getattr(args, flag, None) for flag, key in PLACEMENT_FLAGS.items()}
    given = {key: value if isinstance(value, str) else list(dict.fromkeys(value))
             for key, value in given.items() if value}
    if not given:
        return options
    placement = options.setdefault("placement", {})
    if not isinstance(placement, dict):
        raise ValueError("option 'placement' is already set to a value: use the placement flags or --opt, not both")
    for key, value in given.items():
        if key in placement:
            raise ValueError(f"placement.{key} is given both with --opt and with its flag")
        placement[key] = value
    return options


def _print_json(value: Any) -> None:
    """An answer (model or list of models) as the API's JSON."""
    print(json.dumps(api_json(value), indent=2))


def _reason(cluster: models.Cluster) -> str:
    return f" ({cluster.reason_code}: {cluster.reason})" if cluster.reason_code else ""


def _print_cluster(cluster: models.Cluster) -> None:
    print(f"cluster  {cluster.id}  {cluster.product} {cluster.version}  owner {cluster.owner}")
    print(f"state    {cluster.state}{_reason(cluster)}")
    for notice in cluster.notices or ():
        print(f"notice   {notice.code}: {notice.message}")
    if cluster.members:
        print(f"{'MEMBER':<28}{'ROLE':<10}{'STATE':<14}{'NODE':<14}{'IP':<16}{'DISKS':<7}DNS")
        for m in cluster.members:
            print(f"{m.member_id:<28}{m.role:<10}{m.state:<14}{m.node or '-':<14}"
                  f"{m.ip or '-':<16}{len(m.disks):<7}{m.dns_name or '-'}")


def _event_line(event: models.Event) -> str:
    return (f"{event.at[11:19]}  {event.member_id or 'cluster':<28}{event.step:<14}{event.state:<18}"
            f"{event.message}")


def cmd_products(args: argparse.Namespace, client: SpindleClient, _: str) -> int:
    products = client.products()
    if args.json:
        _print_json(products)
        return 0
    print(f"{'PRODUCT':<14}{'VERSION':<9}{'IMAGES':<17}{'ROLES':<18}DESCRIPTION")
    for p in products:
        print(f"{p.name:<14}{p.version:<9}{_images(p.images):<17}{','.join(p.roles):<18}{p.description}")
    preparing = [f"{p.name} {p.version}: {p.images.message}" for p in products if p.images.state != "ready"]
    if preparing:  # a launch of one is accepted and waits for its images
        print("\n" + "\n".join(preparing))
    return 0


def _images(images: models.ProductImages) -> str:
    """ready, failed, or preparing with the build's step (e.g. preparing 3/12)."""
    state = str(getattr(images.state, "value", images.state))
    if state == "preparing" and images.step and images.steps:
        return f"preparing {images.step}/{images.steps}"
    return state


def cmd_launch(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    if args.plan:
        plan = client.plan(args.product, args.version, args.options)
        _print_json(plan) if args.json else _print_plan(plan)
        return 0
    cluster = client.launch(args.product, args.version, args.options, args.idempotency_key)
    if args.json and not args.follow:
        _print_json(cluster)
        return 0
    print(f"launched {cluster.id} ({cluster.product} {cluster.version}): {cluster.state}")
    return _follow(args, client, cluster) if args.follow else 0


def _print_plan(plan: models.Plan) -> None:
    print(f"{'placeable' if plan.placeable else 'NOT placeable'}: {plan.summary}")
    if plan.members:
        print(f"{'MEMBER':<28}{'NODE':<14}{'CPUS':<10}DISKS")
        for m in plan.members:
            print(f"{m.member_id:<28}{m.node:<14}{','.join(map(str, m.cpus)) or '-':<10}{','.join(m.disks) or '-'}")
    for unplaced in plan.reasons:
        print(f"{unplaced.member_id} cannot be placed:")
        for reason in unplaced.nodes:
            print(f"  {reason.node}: {reason.constraint}: {reason.message}")


def cmd_clusters(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    clusters = list(client.clusters(username, state=args.state, product=args.product))
    if args.json:
        _print_json(clusters)
        return 0
    print(f"{'ID':<24}{'PRODUCT':<18}{'STATE':<14}{'MEMBERS':<9}CREATED")
    for c in clusters:
        print(f"{c.id:<24}{c.product + ' ' + c.version:<18}{c.state:<14}{len(c.members):<9}{c.created_at[:19]}")
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
    cluster = client.delete(client.find_cluster(username, args.cluster_id), keep_disks=args.keep_disks,
                            dataset=args.dataset, force=args.force)
    if args.json:
        _print_json(cluster)
    else:
        kept = f", its disks kept as dataset {args.dataset or cluster.id}" if args.keep_disks else ""
        print(f"deleting {cluster.id}: {cluster.state}{kept}")
    return 0


def role_count(text: str) -> tuple[str, int]:
    """``ROLE=N`` of ``spindle resize``."""
    role, sep, count = text.partition("=")
    if not sep or not role or not count.isdigit():
        raise argparse.ArgumentTypeError(f"expected ROLE=COUNT (e.g. worker=4), got {text!r}")
    return role, int(count)


def cmd_resize(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """Resize a running cluster (``ROLE=N`` …); --plan: where added members would go; --follow: until RUNNING."""
    cluster = client.find_cluster(username, args.cluster_id)
    roles = dict(args.counts)
    if args.plan:
        plan = client.plan_resize(cluster, roles)
        _print_json(plan) if args.json else _print_plan(plan)
        return 0 if plan.placeable else 1
    return _changed(args, client, client.resize(cluster, roles), "resizing")


def _changed(args: argparse.Namespace, client: SpindleClient, cluster: models.Cluster, doing: str) -> int:
    """What a stop, start or resize answered; with --follow, its progress until the cluster settles."""
    if args.follow:
        return _follow(args, client, cluster)
    _print_json(cluster) if args.json else print(f"{doing} {cluster.id}: {cluster.state}")
    return 0


def cmd_stop(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """Stop a cluster (disks and floating IPs kept); --follow: until it is STOPPED."""
    return _changed(args, client, client.stop(client.find_cluster(username, args.cluster_id)), "stopping")


def cmd_start(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """Start a stopped cluster again; --follow: until it is RUNNING (or FAILED)."""
    return _changed(args, client, client.start(client.find_cluster(username, args.cluster_id)), "starting")


JOB_FINISHED = ("SUCCEEDED", "FAILED", "KILLED")


def cmd_submit(args: argparse.Namespace, client: SpindleClient, username: str) -> int:
    """Submit a driver program; with --wait, wait for its end, print its output and exit like it."""
    cluster = client.find_cluster(username, args.cluster_id)
    job = client.submit(cluster, Path(args.main), [Path(f) for f in args.file], args.args)
    if not args.wait:
        _print_json(job) if args.json else print(f"submitted {job.id} to {cluster.id}: {job.state}")
        return 0
    while job.state not in JOB_FINISHED:
        time.sleep(1)
        job = client.job(cluster, job.id)
    return _print_job(args, job)


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
        print(f"{j.id:<14}{j.state:<11}{j.exit_code if j.exit_code is not None else '-':<6}{j.main:<24}{j.message}")
    return 0


def _print_job(args: argparse.Namespace, job: models.Job, exit_like_job: bool = True) -> int:
    if args.json:
        _print_json(job)
    else:
        print(job.stdout or "", end="")
        print(job.stderr or "", end="", file=sys.stderr)
        print(f"job {job.id}: {job.state} ({job.message})", file=sys.stderr)
    return (0 if job.state == "SUCCEEDED" else 1) if exit_like_job else 0


def _follow(args: argparse.Namespace, client: SpindleClient, cluster: models.Cluster) -> int:
    """Print events as they happen; exit 0 when the cluster settles (RUNNING, STOPPED or DESTROYED), 1 if FAILED."""
    settled: models.Cluster | None = cluster
    for kind, data in client.follow_events(cluster):
        if kind == "end":
            settled = data
        elif args.json:
            print(json.dumps(api_json(data)), flush=True)
        else:
            print(_event_line(data), flush=True)
    if settled is None:
        print(f"{cluster.id} is gone", file=sys.stderr)
        return 1
    if not args.json:
        print(f"{settled.id} is {settled.state}{_reason(settled)}")
    return 1 if settled.state == "FAILED" else 0
