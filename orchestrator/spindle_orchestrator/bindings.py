"""A cluster bound to another cluster of the same owner (e.g. Spark on an HDFS cluster).

A product declares what it can be bound to in its manifest (``"bindings": {"hdfs": {"product":
"hadoop"}}``); a launch names the clusters in its ``bind`` option (``{"hdfs": "<cluster id>"}``).
The target must be the caller's own (another user's cluster is "not found", like any cross-tenant
access), of the declared product, and running. Templates then see ``bound.<name>`` — the target's
``cluster`` and ``peers`` (role → members with id, name, ip, node) and its data-plane ``secret`` (for
a client that must authenticate to it, e.g. jupyterlab's Spark driver; a template puts it in env,
never on a command line) — or ``None`` where the launch bound nothing; and network isolation lets a
cluster and the clusters it binds (both ways) reach each other. Deleting a target is not refused:
the clusters bound to it keep running without it."""
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.contracts import ClusterState
from spindle_common.errors import ApiError
from spindle_orchestrator.models import Cluster
from spindle_orchestrator.sweeper import settled_cluster

USABLE = (ClusterState.RUNNING.value, ClusterState.DEGRADED.value)


class BindingGone(Exception):
    """A bound cluster went away between the launch's acceptance and its start."""


def bound_ids(options: dict[str, Any]) -> dict[str, str]:
    """binding name → bound cluster id, as the launch's options name them."""
    return dict(options.get("bind") or {})


def check(session: Session, manifest: dict[str, Any], options: dict[str, Any], owner_id: str) -> None:
    """Refuse a launch whose bindings name a cluster that is not the owner's (404), not of the
    declared product (422), or not running (409). The options were validated against the schema,
    so every name is a declared binding."""
    declared = manifest.get("bindings", {})
    for name, target_id in sorted(bound_ids(options).items()):
        target = session.get(Cluster, target_id)
        if target is None or target.owner_id != owner_id:
            raise ApiError(404, "BOUND_CLUSTER_NOT_FOUND", f"bind.{name}: you have no cluster {target_id}",
                           {"binding": name, "cluster_id": target_id})
        wanted = declared[name]["product"]
        if target.product != wanted:
            raise ApiError(422, "INVALID_OPTIONS", f"bind.{name} must name a {wanted} cluster", {"errors": [
                {"path": f"bind.{name}", "message": f"cluster {target_id} is {target.product}, not {wanted}"}]})
        if target.delete_requested or target.state not in USABLE:
            state = "being deleted" if target.delete_requested else target.state
            raise ApiError(409, "BOUND_CLUSTER_NOT_RUNNING",
                           f"bind.{name}: cluster {target_id} is {state}; bind to it while it runs",
                           {"binding": name, "cluster_id": target_id, "state": target.state})


def _usable(cluster: Cluster | None) -> bool:
    return cluster is not None and not cluster.delete_requested and not settled_cluster(cluster.state,
                                                                                         cluster.cleaned_up)


def context(session: Session, manifest: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``bound`` for templates: every declared binding → the bound cluster's facts, or None.
    ``BindingGone`` when a bound cluster is being deleted or is gone."""
    bound: dict[str, Any] = {name: None for name in manifest.get("bindings", {})}
    for name, target_id in bound_ids(options).items():
        target = session.get(Cluster, target_id)
        if target is None or not _usable(target):
            raise BindingGone(f"bind.{name}: cluster {target_id} is gone or being deleted")
        peers: dict[str, list[dict[str, Any]]] = {}
        for m in sorted(target.members, key=lambda m: (m.role, m.index)):
            peers.setdefault(m.role, []).append({"id": m.member_id, "name": f"{m.role}-{m.index}", "ip": m.ip,
                                                 "node": m.node})
        bound[name] = {"cluster": {"id": target.id, "owner": target.owner, "product": target.product,
                                   "version": target.version}, "peers": peers, "secret": target.secret}
    return bound


def linked(session: Session, cluster: Cluster) -> list[str]:
    """Ids of the live clusters this one binds or is bound by (the same owner's only)."""
    targets = set(bound_ids(cluster.options).values())
    others = session.scalars(select(Cluster).where(Cluster.owner_id == cluster.owner_id, Cluster.id != cluster.id,
                                                   Cluster.state != ClusterState.DESTROYED.value))
    return sorted(o.id for o in others
                  if _usable(o) and (o.id in targets or cluster.id in bound_ids(o.options).values()))
