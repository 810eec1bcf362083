"""Cluster rows: creation (idempotent per owner + key), lookup, listing with page tokens, events."""
import base64
import logging
import secrets
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from spindle_common.catalog import role_counts
from spindle_common.clients import SchedulerClient
from spindle_common.contracts import ClusterState, utcnow
from spindle_common.errors import ApiError
from spindle_common.notify import CLUSTERS, EVENTS, notify
from spindle_orchestrator.kerberos import Kdc
from spindle_orchestrator.models import Cluster, Dataset, Event
from spindle_orchestrator.render import ip_principals

log = logging.getLogger("spindle.orchestrator.clusters")

# The notice of a cluster whose replicas share the one node of the platform.
REPLICAS_SHARE = "REPLICAS_SHARE_A_NODE"


def platform_nodes(scheduler: SchedulerClient) -> list[str]:
    """The platform's nodes now (the scheduler's: the active agents); none when it does not answer
    (the scheduler still keeps replicas apart when it places them)."""
    try:
        return sorted(scheduler.nodes())
    except ApiError as exc:
        log.warning("cannot list the platform's nodes (replicas are not checked before placement): %s", exc.message)
        return []


def sharing_message(manifest: dict[str, Any], options: dict[str, Any], roles: list[str]) -> str:
    """What a cluster whose replica ``roles`` share the platform's one node says (its REPLICAS_SHARE notice)."""
    counts = role_counts(manifest, options)
    what = ", ".join(f"{counts[r]} {r} members" for r in roles)
    return (f"replicas share a node: the platform has one node, so {what} (copies of each other's data) are all "
            "on it; its loss loses every copy")


def add_notice(session: Session, cluster: Cluster, code: str, message: str) -> None:
    """Tell the cluster's owner what its state does not say: a notice in its view and an event in its
    timeline."""
    cluster.notices = [*(cluster.notices or ()), {"code": code, "message": message, "at": utcnow().isoformat()}]
    record_event(session, cluster.id, "cluster", code, message)


def new_cluster_id() -> str:
    return "c" + uuid.uuid4().hex[:10]


def record_event(session: Session, cluster_id: str, step: str, state: str, message: str = "",
                 member_id: str | None = None) -> None:
    """Add to the timeline; event streams hear of it when the transaction commits."""
    session.add(Event(cluster_id=cluster_id, member_id=member_id, step=step, state=state, message=message[:2000]))
    notify(session, EVENTS, cluster_id)


def wake(session: Session, cluster_id: str) -> None:
    """The worker looks at this cluster as soon as the transaction commits (created, deletion asked, a job
    changed)."""
    notify(session, CLUSTERS, cluster_id)


SECRET_ENV = "SPINDLE_CLUSTER_SECRET"
KEYTAB_ENV = "SPINDLE_KEYTAB"


def new_secret() -> str:
    """A cluster's data-plane secret: 32 random bytes, hex."""
    return secrets.token_hex(32)


def with_secret(env: dict[str, str], cluster: Cluster) -> dict[str, str]:
    """A member's or driver's container env with its cluster's secret (a cluster created before
    secrets existed gets one now, kept for every later member and job)."""
    if not cluster.secret:
        cluster.secret = new_secret()
    return {**env, SECRET_ENV: cluster.secret}


def container_with_secret(container: dict[str, Any], cluster: Cluster, nodes_url: str | None = None) -> dict[str, Any]:
    """A rendered member's (or job driver's) container whose env carries its cluster's secret and,
    given where the nodes reach this orchestrator (a platform with floating IPs), its network
    isolation: where its executor learns the cluster's peers."""
    isolated = {"isolation": {"peers_url": peers_url(nodes_url, cluster.id)}} if nodes_url else {}
    return {**container, "env": with_secret(container.get("env") or {}, cluster), **isolated}


def with_keytab(container: dict[str, Any], principals: list[str], kdc_dir: Path) -> dict[str, Any]:
    """A member's or driver's container whose env carries the keytab of its Kerberos ``principals``
    (base64, ``SPINDLE_KEYTAB``: the product's start writes it to a private file), made in the
    platform's KDC (a principal named after an IP gets fresh keys: ``render.ip_principals``); the
    container as it is without principals. Stored and seen like the secret.
    ``KerberosError`` when the KDC fails."""
    if not principals:
        return container
    keytab = base64.b64encode(Kdc(kdc_dir).keytab(principals, fresh=ip_principals(principals))).decode()
    return {**container, "env": {**(container.get("env") or {}), KEYTAB_ENV: keytab}}


def peers_url(nodes_url: str, cluster_id: str) -> str:
    """The orchestrator's answer to who a cluster's containers may talk to (``peers.py``)."""
    return f"{nodes_url.rstrip('/')}/internal/clusters/{cluster_id}/peers"


def repeated(session: Session, owner_id: str, idempotency_key: str | None) -> Cluster | None:
    """The cluster this owner already created with this idempotency key, if any."""
    if not idempotency_key:
        return None
    return session.scalar(select(Cluster).where(Cluster.owner_id == owner_id,
                                                Cluster.idempotency_key == idempotency_key))


def create(session: Session, owner: str, owner_id: str, product: str, version: str, options: dict[str, Any],
           idempotency_key: str | None, demand: dict[str, Any] | None = None,
           dataset: Dataset | None = None, notices: dict[str, str] | None = None) -> tuple[Cluster, bool]:
    """A new PENDING cluster (attaching ``dataset``, checked by the caller; with ``notices``, code →
    message, told with ``add_notice``), or the one this owner (by id: a re-created user is another)
    already created with this key (created=False)."""
    existing = repeated(session, owner_id, idempotency_key)
    if existing:
        return _same_request_or_409(existing, product, version, options), False
    cluster = Cluster(id=new_cluster_id(), owner=owner, owner_id=owner_id, product=product, version=version,
                      options=options,
                      state=ClusterState.PENDING.value, idempotency_key=idempotency_key, cleaned_up=False,
                      delete_requested=False, secret=new_secret(), demand=demand)
    if dataset is not None:
        cluster.dataset_id = dataset.id
        dataset.state, dataset.attached_to = "ATTACHED", cluster.id
    session.add(cluster)
    record_event(session, cluster.id, "accepted", ClusterState.PENDING.value,
                 f"{product} {version} requested by {owner}")
    for code, message in (notices or {}).items():
        add_notice(session, cluster, code, message)
    wake(session, cluster.id)
    try:
        session.commit()
    except IntegrityError:  # the same key raced in from a parallel request
        session.rollback()
        existing = session.scalar(select(Cluster).where(Cluster.owner_id == owner_id,
                                                        Cluster.idempotency_key == idempotency_key))
        if existing is None:  # some other constraint failed, not the key's: that error stands
            raise
        return _same_request_or_409(existing, product, version, options), False
    return cluster, True


def _same_request_or_409(cluster: Cluster, product: str, version: str, options: dict[str, Any]) -> Cluster:
    if (cluster.product, cluster.version, cluster.options) != (product, version, options):
        raise ApiError(409, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for a different launch",
                       {"cluster_id": cluster.id})
    return cluster


def get_or_404(session: Session, cluster_id: str, lock: bool = False) -> Cluster:
    """The cluster (its row locked until the transaction ends with ``lock``), or 404."""
    cluster = session.get(Cluster, cluster_id, with_for_update=lock)
    if cluster is None:
        raise ApiError(404, "CLUSTER_NOT_FOUND", f"cluster {cluster_id} does not exist")
    return cluster


def _token(created_at, cluster_id: str) -> str:
    return base64.urlsafe_b64encode(f"{created_at.isoformat()}|{cluster_id}".encode()).decode()


def list_page(session: Session, owner: str | None, state: str | None, product: str | None, page_size: int,
              page_token: str | None, owner_id: str | None = None) -> tuple[list[Cluster], str | None]:
    """Newest first; the token is the last row's (created_at, id), so pages stay stable under inserts.
    ``owner`` filters by the owner's name, ``owner_id`` by who owns them."""
    query = select(Cluster).order_by(Cluster.created_at.desc(), Cluster.id.desc())
    if owner:
        query = query.where(Cluster.owner == owner)
    if owner_id:
        query = query.where(Cluster.owner_id == owner_id)
    if state:
        query = query.where(Cluster.state == state)
    if product:
        query = query.where(Cluster.product == product)
    if page_token:
        try:
            created, cluster_id = base64.urlsafe_b64decode(page_token.encode()).decode().split("|", 1)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(422, "INVALID_PAGE_TOKEN", "page_token is not one this API returned") from None
        after = datetime.fromisoformat(created)
        query = query.where((Cluster.created_at < after) | ((Cluster.created_at == after) & (Cluster.id < cluster_id)))
    rows = list(session.scalars(query.limit(page_size + 1)))
    next_token = _token(rows[page_size - 1].created_at, rows[page_size - 1].id) if len(rows) > page_size else None
    return rows[:page_size], next_token


def events_after(session: Session, cluster_id: str, after_seq: int) -> list[Event]:
    return list(session.scalars(select(Event).where(Event.cluster_id == cluster_id, Event.seq > after_seq)
                                .order_by(Event.seq)))
