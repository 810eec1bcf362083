"""Quotas: what each user may hold, and the check every new cluster and job driver passes.

A user (the owner key the api-server forwards: ``clusters.owner_id``) holds what their clusters
count that have not been given back — every state but DESTROYED, and FAILED once cleaned up, so a
cluster waiting for resources (PENDING, QUEUED, SCHEDULING) counts; a STOPPED one counts its disks
and floating IPs, not its cpus and memory (a start checks those again) — plus one floating IP per
job driver not finished, and the disks of their kept datasets. A cluster counts its members' cpus,
memory and dedicated disks per class and one floating IP per member (``clusters.demand``, fixed when
it is created).

The check and the insert are one transaction: the owner's ``quotas`` row (made on first use, every
limit NULL: the defaults) is locked ``FOR UPDATE`` first, so two launches of one user cannot both
pass on the same usage. Refusal: 403 ``QUOTA_EXCEEDED`` naming each limit, the amount asked for,
the usage and the quota; nothing is created.
"""
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from spindle_common.catalog import member_requests
from spindle_common.contracts import DISK_CLASSES, ClusterState, QuotaAmounts, QuotaUpdate, QuotaView
from spindle_common.errors import ApiError
from spindle_orchestrator import datasets, jobs
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Cluster, Job, Quota

ManifestFn = Callable[[str, str], dict[str, Any]]
# Sums of cpus are floats (0.1 + 0.2): a limit is exceeded only beyond this much.
EPSILON = 1e-6
SCALARS = ("clusters", "cpus", "mem_mb", "floating_ips")


@dataclass(frozen=True)
class Amounts:
    """Resources counted against a quota (a usage, a demand or the limits)."""

    clusters: int = 0
    cpus: float = 0.0
    mem_mb: int = 0
    disks: Mapping[str, int] = field(default_factory=dict)
    floating_ips: int = 0

    def __add__(self, other: "Amounts") -> "Amounts":
        disks = {c: self.disks.get(c, 0) + other.disks.get(c, 0) for c in {*self.disks, *other.disks}}
        return Amounts(self.clusters + other.clusters, self.cpus + other.cpus, self.mem_mb + other.mem_mb,
                       {c: n for c, n in disks.items() if n}, self.floating_ips + other.floating_ips)

    def items(self) -> list[tuple[str, float]]:
        """Every limit by name: the scalars, then ``disks.<class>`` for each disk class."""
        return [(name, getattr(self, name)) for name in SCALARS] + [
            (f"disks.{c}", self.disks.get(c, 0)) for c in DISK_CLASSES]

    def as_json(self) -> dict[str, Any]:
        return {"clusters": self.clusters, "cpus": round(self.cpus, 6), "mem_mb": self.mem_mb,
                "disks": {c: self.disks.get(c, 0) for c in DISK_CLASSES}, "floating_ips": self.floating_ips}

    @classmethod
    def of_json(cls, data: Mapping[str, Any]) -> "Amounts":
        return cls(int(data.get("clusters", 0)), float(data.get("cpus", 0.0)), int(data.get("mem_mb", 0)),
                   {c: int(n) for c, n in (data.get("disks") or {}).items() if n},
                   int(data.get("floating_ips", 0)))

    def view(self) -> QuotaAmounts:
        return QuotaAmounts(**self.as_json())


@dataclass(frozen=True)
class Defaults:
    """The limits of a user without one of their own (settings ``SPINDLE_DEFAULT_QUOTA_*``)."""

    clusters: int
    cpus: float
    mem_mb: int
    disks_per_class: int
    floating_ips: int


def demand_of(members: list[dict[str, Any]], floating_ips: bool) -> Amounts:
    """What one cluster of these members (``catalog.member_requests``) counts; ``floating_ips``:
    whether members get one (the orchestrator has an IP pool)."""
    disks: dict[str, int] = {}
    for m in members:
        for disk_class, count in m["disks"].items():
            disks[disk_class] = disks.get(disk_class, 0) + int(count)
    return Amounts(clusters=1, cpus=sum(float(m["cpus"]) for m in members),
                   mem_mb=sum(int(m["mem_mb"]) for m in members), disks={c: n for c, n in disks.items() if n},
                   floating_ips=len(members) if floating_ips else 0)


def cluster_demand(manifest: dict[str, Any], options: dict[str, Any], floating_ips: bool) -> Amounts:
    """What a launch of ``manifest`` with (resolved) ``options`` counts."""
    return demand_of(member_requests(manifest, options), floating_ips)


def limits_of(row: Quota | None, defaults: Defaults) -> tuple[Amounts, list[str]]:
    """The user's limits (theirs, or the defaults where they have none) and which are the defaults."""
    own_disks = (row.disks if row else None) or {}
    default_names = [name for name in SCALARS if row is None or getattr(row, name) is None]
    default_names += [f"disks.{c}" for c in DISK_CLASSES if c not in own_disks]

    def pick(name: str) -> Any:
        value = getattr(row, name) if row is not None else None
        return getattr(defaults, name) if value is None else value

    return Amounts(pick("clusters"), float(pick("cpus")), pick("mem_mb"),
                   {c: int(own_disks.get(c, defaults.disks_per_class)) for c in DISK_CLASSES},
                   pick("floating_ips")), default_names


@dataclass(frozen=True)
class Exceeded:
    """One limit a demand would pass."""

    limit: str  # clusters, cpus, mem_mb, floating_ips or disks.<class>
    quota: float
    usage: float
    requested: float

    def as_json(self) -> dict[str, Any]:
        return {"limit": self.limit, "quota": _number(self.quota), "usage": _number(self.usage),
                "requested": _number(self.requested)}


def _number(value: float) -> float | int:
    value = round(value, 6)
    return int(value) if float(value).is_integer() else value


def exceeded(limits: Amounts, usage: Amounts, demand: Amounts) -> list[Exceeded]:
    """Each limit that ``usage`` plus ``demand`` would pass (only limits the demand asks for: a user
    already over a lowered limit may still do what does not need more of it)."""
    used = dict(usage.items())
    quota = dict(limits.items())
    return [Exceeded(name, quota[name], used[name], asked) for name, asked in demand.items()
            if asked > 0 and used[name] + asked > quota[name] + EPSILON]


def refusal(owner: str, over: list[Exceeded]) -> ApiError:
    """The 403 naming the first limit passed (and every one in ``details.exceeded``)."""
    first = over[0]
    message = (f"over quota: {first.limit}: asking for {_number(first.requested)} with "
               f"{_number(first.usage)} in use, the quota is {_number(first.quota)}")
    if len(over) > 1:
        message += f" (also {', '.join(o.limit for o in over[1:])})"
    return ApiError(403, "QUOTA_EXCEEDED", message, {"owner": owner, **first.as_json(),
                                                     "exceeded": [o.as_json() for o in over]})


# --- in the database ---------------------------------------------------------------------------------


def _owned_by(owner: str) -> Any:
    return Cluster.owner_id == owner


def _holding() -> Any:
    """Clusters that still hold (or will hold) what they asked for."""
    return (Cluster.state != ClusterState.DESTROYED.value) & ~(
        (Cluster.state == ClusterState.FAILED.value) & Cluster.cleaned_up)


def _demand_of_row(cluster: Cluster, manifest_of: ManifestFn, floating_ips: bool) -> Amounts:
    if cluster.demand is not None:
        return Amounts.of_json(cluster.demand)
    try:  # a cluster from before quotas: as its product asks today
        return cluster_demand(manifest_of(cluster.product, cluster.version), cluster.options, floating_ips)
    except (ApiError, KeyError, TypeError, ValueError):  # the catalog no longer has it: as it was launched
        return Amounts(clusters=1, cpus=sum(float(m.spec.get("cpus", 0)) for m in cluster.members),
                       mem_mb=sum(int(m.spec.get("mem_mb", 0)) for m in cluster.members),
                       floating_ips=sum(1 for m in cluster.members if m.ip))


def usage_of(session: Session, owner: str, manifest_of: ManifestFn, floating_ips: bool) -> Amounts:
    """What the owner's clusters not given back (a STOPPED one: its disks and IPs, not its cpus and
    memory), their unfinished jobs' drivers and the owner's kept datasets (disks) hold."""
    total = Amounts(disks=datasets.kept_disks(session, owner))
    for cluster in session.scalars(select(Cluster).where(_owned_by(owner), _holding())):
        demand = _demand_of_row(cluster, manifest_of, floating_ips)
        if cluster.state == ClusterState.STOPPED.value:
            demand = Amounts(clusters=demand.clusters, disks=demand.disks, floating_ips=demand.floating_ips)
        total += demand
    if floating_ips:
        drivers = session.scalar(select(func.count(Job.id)).join(Cluster, Job.cluster_id == Cluster.id)
                                 .where(_owned_by(owner), Job.state.in_((jobs.PENDING, jobs.RUNNING)))) or 0
        total += Amounts(floating_ips=drivers)
    return total


def lock(session: Session, owner: str) -> Quota:
    """The owner's quota row, made if missing (every limit the default) and locked until the
    transaction ends: launches and job submissions of one owner pass the check one at a time."""
    session.execute(insert(Quota).values(owner=owner).on_conflict_do_nothing(index_elements=["owner"]))
    row = session.scalar(select(Quota).where(Quota.owner == owner).with_for_update()
                         .execution_options(populate_existing=True))
    assert row is not None  # just made, and rows are only deleted by an admin's reset, never under a lock
    return row


def admit(session: Session, owner: str, demand: Amounts, defaults: Defaults, manifest_of: ManifestFn,
          floating_ips: bool, repeat_key: str | None = None) -> None:
    """Lock the owner's quota and check ``demand`` against it: 403 QUOTA_EXCEEDED, or return with
    the lock held, so the caller's insert commits with the check. A launch repeating an idempotency
    key the owner used already is not checked (it creates nothing: clusters.create answers it)."""
    row = lock(session, owner)
    if repeat_key and session.scalar(select(Cluster.id).where(_owned_by(owner),
                                                              Cluster.idempotency_key == repeat_key)):
        return
    limits, _ = limits_of(row, defaults)
    over = exceeded(limits, usage_of(session, owner, manifest_of, floating_ips), demand)
    if over:
        session.rollback()  # the lock goes at once
        raise refusal(owner, over)


def growth(before: Amounts, after: Amounts) -> Amounts:
    """What ``after`` asks beyond ``before`` (a resize): each resource's increase, nothing for a decrease."""
    return Amounts(0, max(0.0, after.cpus - before.cpus), max(0, after.mem_mb - before.mem_mb),
                   {c: after.disks.get(c, 0) - before.disks.get(c, 0) for c in after.disks
                    if after.disks.get(c, 0) > before.disks.get(c, 0)},
                   max(0, after.floating_ips - before.floating_ips))


def admit_start(session: Session, cluster: Cluster, defaults: Defaults, manifest_of: ManifestFn,
                floating_ips: bool) -> None:
    """Starting a STOPPED cluster asks its cpus and memory back: 403 QUOTA_EXCEEDED if the owner's
    limits no longer allow them (the lock held, as ``admit``)."""
    demand = _demand_of_row(cluster, manifest_of, floating_ips)
    admit(session, cluster.owner_id or "", Amounts(cpus=demand.cpus, mem_mb=demand.mem_mb), defaults, manifest_of,
          floating_ips)


def view(session: Session, owner: str, defaults: Defaults, manifest_of: ManifestFn, floating_ips: bool,
         row: Quota | None = None) -> QuotaView:
    row = row or session.get(Quota, owner)
    limits, default_names = limits_of(row, defaults)
    return QuotaView(owner=owner, limits=limits.view(), usage=usage_of(session, owner, manifest_of,
                                                                        floating_ips).view(),
                     defaults=default_names)


def set_limits(session: Session, owner: str, update: QuotaUpdate) -> Quota:
    """Replace the owner's limits (a limit not given: the default again)."""
    row = lock(session, owner)
    for name in SCALARS:
        setattr(row, name, getattr(update, name))
    row.disks = {c.value: n for c, n in update.disks.items()} if update.disks else None
    session.flush()
    return row


def explicit(session: Session) -> list[Quota]:
    """Every quota an admin set (rows with some limit of their own), by owner."""
    rows = session.scalars(select(Quota).order_by(Quota.owner))
    return [r for r in rows if r.disks or any(getattr(r, n) is not None for n in SCALARS)]


def defaults_of(settings: Settings) -> Defaults:
    """The platform's default limits, from the orchestrator's settings."""
    return Defaults(settings.default_quota_clusters, settings.default_quota_cpus, settings.default_quota_mem_mb,
                    settings.default_quota_disks, settings.default_quota_floating_ips)
