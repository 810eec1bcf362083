"""A cluster bound to another cluster of the same owner (e.g. Spark on an HDFS cluster).

A product declares what it can be bound to in its manifest (``"bindings": {"hdfs": {"product":
"hadoop"}}``); a launch names the clusters in its ``bind`` option (``{"hdfs": "<cluster id>"}``).
The target must be the caller's own (another user's cluster is "not found", like any cross-tenant
access), of the declared product, and running. Templates then see ``bound.<name>`` — the target's
``cluster`` and ``peers`` (role → members with id, name, ip, node) and its data-plane ``secret`` (for
a client that must authenticate to it, e.g. jupyterlab's Spark driver; a template puts it in env,
never on a command line) — or ``None`` where the launch bound nothing; and network isolation lets a
cluster and the clusters it binds (both ways) reach each other. Deleting a target that live clusters
bind is refused (409 naming them) unless the delete says ``force``: then those clusters keep running
without it and their views say so (a BINDING_GONE notice, and their timelines)."""
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.contracts import ClusterState
from spindle_common.errors import ApiError
from spindle_orchestrator.clusters import add_notice
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
        # FOR SHARE: a delete of the target (FOR UPDATE) waits for this launch, then sees it bound.
        target = session.get(Cluster, target_id, with_for_update={"read": True})
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


def _others(session: Session, cluster: Cluster) -> list[Cluster]:
    """The owner's other live clusters (not being deleted, not settled)."""
    return [o for o in session.scalars(select(Cluster).where(
        Cluster.owner_id == cluster.owner_id, Cluster.id != cluster.id,
        Cluster.state != ClusterState.DESTROYED.value).order_by(Cluster.id)) if _usable(o)]


def linked(session: Session, cluster: Cluster) -> list[str]:
    """Ids of the live clusters this one binds or is bound by (the same owner's only)."""
    targets = set(bound_ids(cluster.options).values())
    return [o.id for o in _others(session, cluster) if o.id in targets or cluster.id in bound_ids(o.options).values()]


def bound_by(session: Session, cluster: Cluster) -> list[tuple[Cluster, str]]:
    """The live clusters that bind ``cluster``, each with the name of its binding."""
    return [(o, name) for o in _others(session, cluster) for name, target in sorted(bound_ids(o.options).items())
            if target == cluster.id]


def refuse_or_tell_bound(session: Session, cluster: Cluster, force: bool) -> None:
    """Before ``cluster`` is deleted: refuse (409 CLUSTER_IN_USE, naming them) while live clusters bind
    it, or, with ``force``, tell each of them (a BINDING_GONE notice in its view and its timeline)."""
    users = bound_by(session, cluster)
    if not users:
        return
    if not force:
        names = ", ".join(f"{o.id} ({o.product}, bind.{name})" for o, name in users)
        raise ApiError(409, "CLUSTER_IN_USE", f"cluster {cluster.id} is bound by {names}: delete those first, or "
                       "delete with force=true and they run on without it",
                       {"bound_by": [{"cluster_id": o.id, "product": o.product, "binding": name} for o, name in users]})
    for other, name in users:
        add_notice(session, other, "BINDING_GONE",
                   f"bind.{name}: cluster {cluster.id} was deleted (force); this cluster runs on without it")
