"""The adapter around the reconcile core: ``advance(cluster_id)`` observes one cluster (its row,
the scheduler's tasks, Consul, its jobs), asks ``reconcile`` what to do, and applies the actions, in
one transaction with the row locked (SKIP LOCKED), so a crash at any point resumes from the last
committed state (every action is safe to repeat).

What the orchestrator owns and applies itself: the cluster's floating IPs and DNS names (one
network-service call per cluster to hold them, one to release them), rendering, the timeline and
jobs. What it asks the scheduler for: launching the cluster (members with their IP leases),
relaunching a member, killing the cluster's tasks. It never touches disks: the scheduler holds them
and reports them with each task.
"""
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from spindle_common.catalog import SELF_DRAIN, role_counts, with_counts
from spindle_common.clients import DiskClient, NetworkClient, SchedulerClient
from spindle_common.consul import ConsulClient
from spindle_common.contracts import (
    TERMINAL_TASK_STATES,
    ClusterSpec,
    ClusterState,
    ContainerSpec,
    DiskClass,
    IpLease,
    MemberSpec,
    MemberState,
    RestartPolicy,
    TaskView,
    as_utc,
    utcnow,
)
from spindle_common.errors import ApiError
from spindle_common.images import product_state
from spindle_orchestrator import bindings, datasets, jobs
from spindle_orchestrator.clusters import container_with_secret, record_event, with_keytab
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.job_runner import JobRunner
from spindle_orchestrator.kerberos import Kdc, KerberosError
from spindle_orchestrator.models import Cluster, Dataset, Event, Member, identity
from spindle_orchestrator.reconcile import (
    FOLLOWED,
    SERVED,
    Action,
    AddMembers,
    AnnounceHealthy,
    AwaitImages,
    CheckDrain,
    Desired,
    Drain,
    ForgetMembers,
    KeepDisks,
    Kill,
    Launch,
    MarkCleanedUp,
    MemberRecord,
    Observed,
    Recheck,
    Reconfigure,
    RecordMember,
    Relaunch,
    ReleaseIps,
    RemoveMembers,
    Start,
    Stop,
    StopJobs,
    Timeouts,
    Transition,
    reconcile,
)
from spindle_orchestrator.reconfigure import Reconfigurer
from spindle_orchestrator.render import (
    PlannedMember,
    RenderError,
    cluster_principal_patterns,
    member_context,
    member_principals,
    plan_members,
    planned_of,
    render_member,
    render_value,
)
from spindle_orchestrator.resize import recorded_counts
from spindle_orchestrator.sweeper import IpSweeper

log = logging.getLogger("spindle.lifecycle")
# How long a member may drain when its product's drain names no timeout_s.
DRAIN_TIMEOUT_S = 1800.0
# How long a member's own drain ``start`` may take (it starts the drain; ``done`` follows it).
DRAIN_START_TIMEOUT_S = 120
# ``done`` exits with this when the drain failed for good: the member stays, the resize of it is undone.
DRAIN_FAILED_EXIT = 3
ManifestFn = Callable[[str, str], dict[str, Any]]
S = ClusterState


class LaunchFailed(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def desired_of(cluster: Cluster, manifest: dict | None = None, keeping: bool = False) -> Desired:
    """The cluster as the reconcile core takes it; ``manifest``: its product's (the counts it should
    have come from its options and the manifest's defaults), None when the catalog lacks it;
    ``keeping``: its disks are still to go into its dataset (``datasets.keeping``)."""
    # A failed cluster that attached a dataset hands its disks back to it: a failed launch loses no data.
    keep = cluster.keep_disks or (cluster.state == S.FAILED and cluster.dataset_id is not None)
    return Desired(
        keep_pending=keep and keeping,
        cluster_id=cluster.id, state=S(cluster.state), delete_requested=cluster.delete_requested,
        deadline=as_utc(cluster.deadline) if cluster.deadline else None, cleaned_up=cluster.cleaned_up,
        wait_for_resources=bool(cluster.options.get("wait_for_resources")),
        stop_requested=cluster.stop_requested, keep_disks=keep,
        counts=role_counts(manifest, cluster.options) if manifest is not None else None,
        drains={role: float(spec["drain"].get("timeout_s", DRAIN_TIMEOUT_S))
                for role, spec in (manifest or {}).get("roles", {}).items() if spec.get("drain")},
        members=tuple(MemberRecord(member_id=m.member_id, restart=RestartPolicy(m.spec.get("restart", "never")),
                                   state=MemberState(m.state), message=m.message, replacements=m.replacements,
                                   dns_name=m.dns_name, role=m.role, index=m.index, drain=m.drain_state,
                                   drain_since=as_utc(m.drain_since) if m.drain_since else None)
                      for m in cluster.members))


class Lifecycle:
    def __init__(self, sessions: sessionmaker[Session], settings: Settings, manifest_of: ManifestFn,
                 scheduler: SchedulerClient, network: NetworkClient, consul: ConsulClient,
                 recheck: Callable[[str, float], None] = lambda cluster_id, after_s: None,
                 disks: DiskClient | None = None):
        self.sessions = sessions
        self.settings = settings
        self.manifest_of = manifest_of
        self.scheduler = scheduler
        self.network = network
        # Datasets' disk holds are the orchestrator's own (members' are the scheduler's).
        self.disks = disks or DiskClient(settings.disk_service_url, settings.internal_token, actor="orchestrator",
                                         identity_key=settings.identity_key)
        self.reconfigurer = Reconfigurer(self.disks, settings.mesos_agent_port, settings.internal_token)
        self.consul = consul
        self.timeouts = Timeouts(settings.scheduling_timeout_s, settings.deploying_timeout_s,
                                 settings.configuring_timeout_s)
        self.jobs = JobRunner(sessions, settings, manifest_of, network, scheduler)
        self.ip_sweeper = IpSweeper(sessions, network, settings.ip_sweep_grace_s)
        self.recheck = recheck  # reconcile this cluster again after some seconds (set by the worker)

    # --- one round for one cluster --------------------------------------------------------------
    def advance(self, cluster_id: str) -> bool:
        """One reconcile round; True when it moved the cluster to another state or changed its members
        (worth another round)."""
        with self.sessions.begin() as session:
            cluster = session.scalar(select(Cluster).where(Cluster.id == cluster_id).with_for_update(skip_locked=True))
            if cluster is None:
                return False  # another worker holds it
            manifest = self._manifest_or_none(cluster)
            desired = desired_of(cluster, manifest, datasets.keeping(session, cluster))
            observed = self.observe(session, cluster, desired, manifest)
            actions = reconcile(desired, observed, utcnow(), self.timeouts)
            if any(isinstance(a, Launch) for a in actions):
                try:
                    self._launch(session, cluster)
                except LaunchFailed as exc:
                    actions = reconcile(desired, Observed(launch_error=(exc.code, exc.message)), utcnow(),
                                        self.timeouts)
            for action in actions:
                self.apply(session, cluster, action)
            # A changed state, or members added or dropped: the next round has something new to decide.
            return any(isinstance(a, (Transition, AddMembers, ForgetMembers)) for a in actions)

    def _manifest_or_none(self, cluster: Cluster) -> dict | None:
        try:
            return self.manifest_of(cluster.product, cluster.version)
        except ApiError:
            return None

    def observe(self, session: Session, cluster: Cluster, desired: Desired, manifest: dict | None = None) -> Observed:
        """Only what this state's decisions need: one scheduler call, one Consul call while
        CONFIGURING, the cluster's jobs from this service's own table, and while PENDING whether
        the product's images are built yet (their state files, ``spindle_common.images``)."""
        state = desired.state
        gives_back = state == S.DESTROYING or desired.delete_requested or (state == S.FAILED and not desired.cleaned_up)
        stopping = state == S.STOPPING or (desired.stop_requested and state in SERVED)
        tasks = None
        if state in FOLLOWED or stopping or (gives_back and state != S.DESTROYED):
            try:
                answered = [TaskView(**t) for t in self.scheduler.tasks(cluster.id)]
            except ApiError as exc:
                if exc.status != 404:
                    raise
                answered = []
            # Jobs' drivers are tasks of the cluster too: the job runner follows them; reconcile sees members only.
            tasks = {t.member_id: t for t in answered if t.kind != "job"}
            self.jobs.follow(session, cluster, {t.member_id: t for t in answered if t.kind == "job"},
                             self.recheck)
        passing: frozenset[str] = frozenset()
        if state == S.CONFIGURING:
            passing = frozenset(e["Service"]["ID"].removeprefix("member-")
                                for e in self.consul.service_health(cluster.id)
                                if all(c["Status"] == "passing" for c in e["Checks"]))
        running_jobs = sum(1 for j in jobs.of_cluster(session, cluster.id) if j.state in (jobs.PENDING, jobs.RUNNING))
        images = product_state(self.settings.state_dir, manifest) \
            if state == S.PENDING and manifest is not None and not gives_back else None
        return Observed(tasks=tasks, consul_passing=passing,
                        jobs_running=running_jobs if gives_back or stopping else 0, images=images)

    # --- applying ---------------------------------------------------------------------------------
    def apply(self, session: Session, cluster: Cluster, action: Action) -> None:
        members = {m.member_id: m for m in cluster.members}
        match action:
            case Launch():
                pass  # applied before the others (its failure changes the decision)
            case RecordMember(member_id=member_id, task=task) if task is not None and member_id in members:
                self._record(session, cluster, members[member_id], task)
            case Relaunch(member_id=member_id, replacement=replacement, launches_seen=seen):
                again = self.scheduler.relaunch(cluster.id, member_id, seen, action.reason)
                members[member_id].replacements = replacement
                node = again.get("pinned_to")  # restart: in_place, on the disks it kept
                record_event(session, cluster.id, "member", "REPLACED", action.reason + (
                    f"; in place on node {node}, its disks kept" if node else ""), member_id)
            case StopJobs():
                self.jobs.stop_cluster_jobs(session, cluster)
            case Kill() | Stop():
                try:
                    (self.scheduler.stop if isinstance(action, Stop) else self.scheduler.kill)(cluster.id)
                except ApiError as exc:
                    if exc.status != 404:
                        raise
            case Start():
                self.scheduler.start(cluster.id)
                record_event(session, cluster.id, "cluster", "STARTING", "members launched again on their kept disks")
            case KeepDisks():
                self._keep_disks(session, cluster)
            case AddMembers(members=wanted):
                self._add_members(session, cluster, wanted)
            case RemoveMembers(member_ids=member_ids):
                for member_id in member_ids:
                    self.scheduler.kill_member(cluster.id, member_id)
                    record_event(session, cluster.id, "member", "REMOVING", action.reason, member_id)
            case ForgetMembers(member_ids=member_ids):
                self._forget_members(session, cluster, member_ids)
            case Reconfigure():
                self._reconfigure(session, cluster)
            case Drain(member_ids=member_ids):
                self._drain(session, cluster, member_ids)
            case CheckDrain(member_ids=member_ids):
                self._check_drain(session, cluster, member_ids)
            case ReleaseIps():
                self._release_ips(cluster)
                for member in cluster.members:
                    if member.state not in TERMINAL_TASK_STATES:  # never launched, or its end not recorded
                        member.state = MemberState.TASK_KILLED.value
            case Transition(state=state, code=code, deadline=deadline):
                message = action.reason
                if state == S.DESTROYED:
                    removed = jobs.remove_files(self.settings.jobs_dir, session, cluster.id)
                    message += f", files of {removed} jobs removed" if removed else ""
                    message += self._remove_principals(session, cluster)
                    if datasets.end_attachment(session, cluster, self.disks):
                        message += ", the dataset it attached wiped with it"
                self._move(session, cluster, state, message, code, deadline)
            case AnnounceHealthy():
                named = [m for m in cluster.members if m.dns_name]
                if named and self.settings.network_pool:
                    self.network.allocate_batch(self.settings.network_pool, [
                        {"owner": m.member_id, "dns_name": f"{m.role}-{m.index}",
                         "health_tcp_port": ((m.spec.get("container") or {}).get("health") or {}).get("tcp_port")}
                        for m in named], dns_service=cluster.id, healthy=True)
            case AwaitImages(reason=reason):
                last = session.scalar(select(Event.message).where(Event.cluster_id == cluster.id, Event.step == "image")
                                      .order_by(Event.seq.desc()).limit(1))
                if last != reason:  # its progress, not every look
                    record_event(session, cluster.id, "image", "WAITING", reason)
            case Recheck(after_s=after_s):
                self.recheck(cluster.id, after_s)
            case MarkCleanedUp():
                cluster.cleaned_up = True
                record_event(session, cluster.id, "cleanup", "DONE", action.reason)

    def _remove_principals(self, session: Session, cluster: Cluster) -> str:
        """The destroyed cluster's Kerberos principals deleted (their keys open nothing any more); what
        the timeline says of it. One named after an address another cluster's member holds by now is
        that member's (it got fresh keys when it was made). A KDC that fails here leaves them (logged):
        keys of a cluster whose members are gone."""
        if not self.settings.kdc_address:
            return ""
        try:
            held = set(session.scalars(select(Member.ip).join(Cluster, Cluster.id == Member.cluster_id).where(
                Member.cluster_id != cluster.id, Member.ip.is_not(None), Cluster.state != S.DESTROYED.value)))
            ips = sorted({m.ip for m in cluster.members if m.ip} - held)
            gone = Kdc(self.settings.kdc_dir).remove_matching(cluster_principal_patterns(cluster.id, ips))
        except KerberosError as exc:
            log.warning("cluster %s: its Kerberos principals stay: %s", cluster.id, exc)
            return ", its Kerberos principals not removed (see the orchestrator's log)"
        return f", its {len(gone)} Kerberos principals removed" if gone else ""

    def _move(self, session: Session, cluster: Cluster, state: ClusterState, message: str, code: str | None,
              deadline) -> None:
        log.info("cluster %s: %s → %s %s", cluster.id, cluster.state, state.value, message)
        if state == S.FAILED:
            cluster.reason_code, cluster.reason, cluster.cleaned_up = code, message[:2000], False
            message = f"{code}: {message}"
        cluster.state = state.value
        cluster.deadline = deadline.replace(tzinfo=None) if deadline else None  # stored as UTC without zone
        record_event(session, cluster.id, "cluster", state.value, message)

    def _record(self, session: Session, cluster: Cluster, member: Member, task: TaskView) -> None:
        member.state, member.message = task.state.value, task.message[:2000]
        member.node = task.hostname or member.node
        member.ip = task.ip or member.ip
        if task.disks or member.state == MemberState.PENDING:
            member.disks = [d.model_dump(mode="json", exclude_none=True) for d in task.disks]
        if task.launches - 1 > member.replacements:  # relaunched, but the round that asked did not commit
            member.replacements = task.launches - 1
            record_event(session, cluster.id, "member", "REPLACED", f"replacement {member.replacements}",
                         member.member_id)
        record_event(session, cluster.id, "member", task.state.value, task.message, member.member_id)

    # --- PENDING: hold IPs, render, hand the cluster to the scheduler -------------------------------
    def _manifest(self, cluster: Cluster) -> dict:
        try:
            return self.manifest_of(cluster.product, cluster.version)
        except ApiError as exc:  # the catalog changed since the launch was accepted
            raise LaunchFailed(exc.code, exc.message) from None

    def _launch(self, session: Session, cluster: Cluster) -> None:
        manifest = self._manifest(cluster)
        planned = plan_members(cluster.id, manifest, cluster.options)
        specs = self._prepare(session, cluster, manifest, planned, planned)
        launch = ClusterSpec(cluster_id=cluster.id, **ClusterSpec.placement_fields(cluster.options),
                             members=specs, origin=self.settings.origin)
        try:
            self.scheduler.launch(launch.model_dump(mode="json"))
        except ApiError as exc:
            if exc.code != "CLUSTER_EXISTS":  # CLUSTER_EXISTS: we launched before a crash; carry on
                raise LaunchFailed("SCHEDULER_REJECTED", f"{exc.code}: {exc.message}") from None
        session.flush()
        session.refresh(cluster)  # its members, as just written

    def _prepare(self, session: Session, cluster: Cluster, manifest: dict, planned: list[PlannedMember],
                 adding: list[PlannedMember]) -> list[MemberSpec]:
        """Hold floating IPs for the members ``adding`` (of the cluster's ``planned`` ones), render
        their containers (peers: every planned member) and record them PENDING; their launch specs.
        A member on a dataset's disks is pinned to them. LaunchFailed says why not."""
        attached = session.get(Dataset, cluster.dataset_id) if cluster.dataset_id else None
        pins = datasets.pins(attached) if attached is not None and attached.attached_to == cluster.id else {}
        pool = self.settings.network_pool
        leases: dict[str, IpLease] = {}
        if pool:
            try:
                held = self.network.allocate_batch(pool, [
                    {"owner": m.member_id, "dns_name": m.name,
                     "health_tcp_port": (manifest["roles"][m.role].get("health") or {}).get("tcp_port")}
                    for m in adding], dns_service=cluster.id)
            except ApiError as exc:
                raise LaunchFailed("IP_UNAVAILABLE" if exc.status < 500 else "SERVICE_UNAVAILABLE",
                                   exc.message) from None
            leases = {h["owner"]: IpLease(address=h["address"], docker_network=h["docker_network"],
                                          dns_name=h.get("dns_name")) for h in held}
        existing = {m.member_id: m for m in cluster.members}
        ips = {m.member_id: m.ip for m in existing.values() if m.ip}
        ips.update({member_id: lease.address for member_id, lease in leases.items()})
        bound = self._bound(session, cluster, manifest)
        try:
            specs = [MemberSpec(member_id=m.member_id, role=m.role, cpus=m.cpus, mem_mb=m.mem_mb,
                                disks={DiskClass(c): n for c, n in m.disks.items()},
                                restart=manifest["roles"][m.role].get("restart", "never"),
                                container=self._render(cluster, manifest, m, ips, planned, bound),
                                lease=leases.get(m.member_id), pin=pins.get((m.role, m.index)))
                     for m in adding]
        except RenderError as exc:
            raise LaunchFailed("CONFIG_RENDER_FAILED", str(exc)) from None
        for m, spec in zip(adding, specs, strict=True):
            row = existing.get(m.member_id) or Member(member_id=m.member_id, cluster_id=cluster.id)
            row.role, row.index, row.state = m.role, m.index, MemberState.PENDING.value
            row.spec = spec.model_dump(mode="json")
            row.ip = spec.lease.address if spec.lease else None
            row.dns_name = spec.lease.dns_name if spec.lease else None
            row.ports = manifest["roles"][m.role].get("ports", [])
            row.message, row.disks = row.message or "", row.disks or []
            session.add(row)
        return specs

    @staticmethod
    def _bound(session: Session, cluster: Cluster, manifest: dict) -> dict:
        """What templates know of the clusters this one binds (``bindings.context``)."""
        try:
            return bindings.context(session, manifest, cluster.options)
        except bindings.BindingGone as exc:
            raise LaunchFailed("BOUND_CLUSTER_GONE", str(exc)) from None

    def _render(self, cluster: Cluster, manifest: dict, member: PlannedMember, ips: dict[str, str],
                planned: list[PlannedMember], bound: dict, leaving: Sequence[PlannedMember] = ()) -> ContainerSpec:
        """One member's container as the product's templates make it with these peers (and the
        clusters it binds; ``leaving``: members being drained), with its cluster's secret and network
        isolation."""
        container = container_with_secret(
            render_member(identity(cluster), manifest, cluster.options, member, ips, planned, bound, leaving,
                          cluster.retired or (), self.settings.platform), cluster,
            self.settings.nodes_url if self.settings.network_pool else None)
        names = member_principals(identity(cluster), manifest, cluster.options, member, ips, planned, bound,
                                  self.settings.platform)
        try:
            return ContainerSpec(**with_keytab(container, names, self.settings.kdc_dir))
        except KerberosError as exc:
            raise LaunchFailed("KERBEROS_FAILED", f"the member's Kerberos keys could not be made: {exc}") from None

    # --- RESIZING: members added, removed, told their peers ------------------------------------------
    def _add_members(self, session: Session, cluster: Cluster, wanted: tuple[tuple[str, int], ...]) -> None:
        """The new members (role, index): IPs held, rendered, recorded and handed to the scheduler. A
        resize that cannot be done (no IP left, a render error) is undone: the counts go back to the
        members the cluster has, and the timeline says why."""
        adding: list[PlannedMember] = []
        try:
            manifest = self._manifest(cluster)
            planned = plan_members(cluster.id, manifest, cluster.options)
            adding = [m for m in planned if (m.role, m.index) in set(wanted)]
            specs = self._prepare(session, cluster, manifest, planned, adding)
            self.scheduler.add_members(ClusterSpec(cluster_id=cluster.id, **ClusterSpec.placement_fields(
                cluster.options), members=specs, origin=self.settings.origin).model_dump(mode="json"))
        except LaunchFailed as exc:
            self._release_member_ips([m.member_id for m in adding])
            for row in [m for m in cluster.members if m.member_id in {a.member_id for a in adding}]:
                session.delete(row)
            cluster.options = with_counts(cluster.options, recorded_counts(cluster, exclude={
                a.member_id for a in adding}))
            record_event(session, cluster.id, "resize", "REFUSED", f"{exc.code}: {exc.message}")
            return
        for spec in specs:
            record_event(session, cluster.id, "member", "ADDED",
                         f"added by a resize (IP {spec.lease.address if spec.lease else 'none'})", spec.member_id)
        session.flush()
        session.refresh(cluster)

    def _drainer(self, session: Session, cluster: Cluster, member_ids: tuple[str, ...]):
        """What draining these members takes: the manifest, the drain of their role, the member that
        drains them (the first of the drain's ``by`` role), the members leaving (planned), and the
        context of that member's templates with them as ``leaving``; None when the catalog lacks the
        product or no member of the ``by`` role runs."""
        manifest = self._manifest_or_none(cluster)
        rows = {m.member_id: m for m in cluster.members}
        leaving = [rows[i] for i in member_ids if i in rows]
        if manifest is None or not leaving:
            return None
        drain = manifest["roles"][leaving[0].role].get("drain")
        by = next((m for m in cluster.members if drain and m.role == drain["by"] and m.node), None)
        if by is None:
            return None
        everyone = [planned_of(m) for m in cluster.members]
        going = [planned_of(m) for m in leaving]
        ips = {m.member_id: m.ip for m in cluster.members if m.ip}
        templates = _templates(cluster, manifest, by, self._bound(session, cluster, manifest), going,
                               self.settings.platform)
        return manifest, drain, by, leaving, going, everyone, ips, templates

    def _self_drain(self, session: Session, cluster: Cluster, member_ids: tuple[str, ...]):
        """A drain each leaving member runs itself (``by: self``, Cassandra's ``nodetool
        decommission``): the manifest, the drain, and each leaving member with its templates' context
        (None when the drain is another role's, or the catalog lacks the product)."""
        manifest = self._manifest_or_none(cluster)
        leaving = [m for m in cluster.members if m.member_id in member_ids]
        if manifest is None or not leaving:
            return None
        drain = manifest["roles"][leaving[0].role].get("drain")
        if not drain or drain["by"] != SELF_DRAIN:
            return None
        bound = self._bound(session, cluster, manifest)
        going = [planned_of(m) for m in leaving]
        return manifest, drain, [(row, _templates(cluster, manifest, row, bound, going, self.settings.platform))
                                 for row in leaving]

    def _drain_refused(self, session: Session, cluster: Cluster, row: Member, said: str) -> None:
        """A member's own drain refused or failed: it stays (its role's count goes back up to it; the
        members above it whose drains go on still leave), and the timeline says why."""
        row.drain_state, row.drain_since = None, None
        going = {m.member_id for m in cluster.members if m.role == row.role and m.drain_state}
        counts = recorded_counts(cluster, exclude=going)
        cluster.options = with_counts(cluster.options, {row.role: counts[row.role]})
        record_event(session, cluster.id, "resize", "REFUSED", f"DRAIN_FAILED: {row.member_id} could not be "
                     f"drained, so it stays: {said[-500:]}", row.member_id)

    def _drain_selves(self, session: Session, cluster: Cluster, found) -> None:
        """Each leaving member starts its own drain; one whose start exits non-zero (the product
        refuses: too few replicas would be left) stays, and the resize of it is undone."""
        _, drain, leaving = found
        now = utcnow().replace(tzinfo=None)
        for row, templates in leaving:
            if not row.node:  # not running anywhere: nothing of it to drain
                row.drain_state, row.drain_since = "drained", now
                record_event(session, cluster.id, "member", "DRAIN_SKIPPED", "not running: nothing to drain",
                             row.member_id)
                continue
            try:
                argv = render_value(drain["start"], templates, f"role {row.role} drain.start")
            except RenderError as exc:
                self._drain_refused(session, cluster, row, str(exc))
                continue
            code, output = self.reconfigurer.run(row, argv, DRAIN_START_TIMEOUT_S)
            said = _last_line(output, "started")
            if code is not None and code != 0:
                self._drain_refused(session, cluster, row, said)
                continue
            # Started (or its node did not answer: then its ``done`` finds no drain under way, and it stays).
            row.drain_state, row.drain_since = "draining", now
            record_event(session, cluster.id, "member", "DRAINING", f"{row.member_id}: {said[-300:]}", row.member_id)

    def _check_selves(self, session: Session, cluster: Cluster, found) -> None:
        """Each draining member's own ``done`` check: 0 drained, DRAIN_FAILED_EXIT failed (it stays)."""
        _, drain, leaving = found
        for row, templates in leaving:
            ran = self._run_done(session, cluster, row, drain, templates, row.role)
            if ran is None:
                return
            code, output = ran
            if code == 0:
                row.drain_state = "drained"
                record_event(session, cluster.id, "member", "DRAINED", f"{row.member_id}: {_last_line(output, 'done')}",
                             row.member_id)
            elif code == DRAIN_FAILED_EXIT:
                self._drain_refused(session, cluster, row, _last_line(output, "its drain failed"))

    def _drain(self, session: Session, cluster: Cluster, member_ids: tuple[str, ...]) -> None:
        """Tell the product the members are leaving: the drainer's files rendered with them as
        ``leaving`` go into it and its reload runs (HDFS: the NameNode's exclude file, refreshNodes),
        or each runs its own drain (``by: self``); they are draining from now on (a drainer missing:
        they go undrained, the timeline says why)."""
        selves = self._self_drain(session, cluster, member_ids)
        if selves is not None:
            self._drain_selves(session, cluster, selves)
            return
        found = self._drainer(session, cluster, member_ids)
        now = utcnow().replace(tzinfo=None)
        if found is None:
            for row in [m for m in cluster.members if m.member_id in member_ids]:
                row.drain_state, row.drain_since = "drained", now
                record_event(session, cluster.id, "member", "DRAIN_SKIPPED", "no member runs that could drain it",
                             row.member_id)
            return
        manifest, _, by, leaving, going, everyone, ips, _ = found
        container = self._render(cluster, manifest, planned_of(by), ips, everyone,
                                 self._bound(session, cluster, manifest), going)
        message = self.reconfigurer.apply(by, container, manifest["roles"][by.role].get("reload"))
        self.scheduler.update_container(cluster.id, by.member_id, container.model_dump(mode="json"))
        by.spec = {**by.spec, "container": container.model_dump(mode="json")}
        for row in leaving:
            row.drain_state, row.drain_since = "draining", now
            record_event(session, cluster.id, "member", "DRAINING", f"{by.member_id} told: {message}", row.member_id)

    def _check_drain(self, session: Session, cluster: Cluster, member_ids: tuple[str, ...]) -> None:
        """Run the drain's ``done`` check in the drainer; exit 0: the members are drained."""
        selves = self._self_drain(session, cluster, member_ids)
        if selves is not None:
            self._check_selves(session, cluster, selves)
            return
        found = self._drainer(session, cluster, member_ids)
        if found is None:
            return
        _, drain, by, leaving, _, _, _, templates = found
        ran = self._run_done(session, cluster, by, drain, templates, leaving[0].role)
        if ran is None:
            return
        code, output = ran
        if code == 0:
            said = _last_line(output, "done")
            for row in leaving:
                row.drain_state = "drained"
                record_event(session, cluster.id, "member", "DRAINED", f"{by.member_id}: {said[-300:]}", row.member_id)

    def _run_done(self, session: Session, cluster: Cluster, member: Member, drain: dict, templates: dict,
                  role: str) -> tuple[int | None, str] | None:
        """The drain's ``done`` check rendered and run in ``member``: (exit code, output); None when it
        does not render (the timeline says why)."""
        try:
            argv = render_value(drain["done"], templates, f"role {role} drain.done")
        except RenderError as exc:
            record_event(session, cluster.id, "cluster", "DRAIN_CHECK_FAILED", str(exc))
            return None
        return self.reconfigurer.run(member, argv)

    def _forget_members(self, session: Session, cluster: Cluster, member_ids: tuple[str, ...]) -> None:
        """Removed members whose tasks ended: their IPs and DNS names released, their records dropped;
        the drained ones stay in the cluster's ``retired`` until a member holds their IP again (the
        entries of IPs members hold now are dropped here)."""
        self._release_member_ips(list(member_ids))
        gone = [m for m in cluster.members if m.member_id in member_ids]
        held = {m.ip for m in cluster.members if m.member_id not in member_ids and m.ip}
        cluster.retired = [r for r in cluster.retired or () if r.get("ip") not in held] + [
            {"member_id": m.member_id, "role": m.role, "ip": m.ip} for m in gone if m.drain_state and m.ip]
        for row in gone:
            record_event(session, cluster.id, "member", "REMOVED", "removed by a resize; its disks are wiped",
                         row.member_id)
            session.delete(row)
        session.flush()
        session.refresh(cluster)

    def _release_member_ips(self, member_ids: list[str]) -> None:
        if self.settings.network_pool and member_ids:
            self.network.release_many(member_ids)

    def _reconfigure(self, session: Session, cluster: Cluster) -> None:
        """Every member rendered again with the peers it has now; where the files changed, the new ones
        go into the running member and its product's reload runs (``reconfigure.py``), and the
        scheduler keeps the new container for a later relaunch."""
        try:
            manifest = self._manifest(cluster)
            bound = self._bound(session, cluster, manifest)
        except LaunchFailed as exc:  # the catalog or a bound cluster changed: the members keep what they have
            record_event(session, cluster.id, "cluster", "RECONFIGURE_FAILED", f"{exc.code}: {exc.message}")
            return
        planned = {m.member_id: m for m in plan_members(cluster.id, manifest, cluster.options)}
        ips = {m.member_id: m.ip for m in cluster.members if m.ip}
        peers = [planned[m.member_id] for m in cluster.members if m.member_id in planned]
        for row in cluster.members:
            if row.member_id not in planned:
                continue
            try:
                container = self._render(cluster, manifest, planned[row.member_id], ips, peers, bound)
            except RenderError as exc:
                record_event(session, cluster.id, "member", "RECONFIGURE_FAILED", str(exc), row.member_id)
                continue
            old = ContainerSpec(**(row.spec.get("container") or {}))
            if container.files == old.files:
                continue
            reload = manifest["roles"][row.role].get("reload")
            message = self.reconfigurer.apply(row, container, reload)
            self.scheduler.update_container(cluster.id, row.member_id, container.model_dump(mode="json"))
            row.spec = {**row.spec, "container": container.model_dump(mode="json")}
            record_event(session, cluster.id, "member", "RECONFIGURED", message, row.member_id)

    def _keep_disks(self, session: Session, cluster: Cluster) -> None:
        """The ended members' kept disks to the cluster's dataset (recorded before, KEEPING or ATTACHED),
        in one scheduler call (a repeat after a crash moves nothing more and answers the same disks);
        the dataset KEPT; the timeline says so."""
        dataset = session.get(Dataset, cluster.dataset_id) if cluster.dataset_id else None
        if dataset is None:  # not reachable: a keeping cluster has its dataset recorded first
            raise LaunchFailed("DATASET_MISSING", f"cluster {cluster.id} keeps its disks but has no dataset")
        members = [m for m in cluster.members if m.disks]
        moved = self.scheduler.hand_over(cluster.id, {m.member_id: datasets.part_owner(dataset.id, m.role, m.index)
                                                      for m in members}) if members else {}
        datasets.keep(dataset, members, moved)
        record_event(session, cluster.id, "dataset", "KEPT", f"disks of {len(members)} members kept as dataset "
                     f"{dataset.name!r} ({dataset.id})")

    def _release_ips(self, cluster: Cluster) -> None:
        """Every floating IP and DNS name of the cluster's members, in one call (none held: fine):
        by their owners' prefix (``<cluster id>-``), so members held but never recorded here (a
        crash between holding and writing them) are freed too."""
        if self.settings.network_pool:
            self.network.release_owner_prefix(f"{cluster.id}-")

    # --- orphans ----------------------------------------------------------------------------------
    def sweep(self) -> list[str]:
        """Kill what the scheduler still runs for clusters this orchestrator has destroyed or does
        not know, and give back their IPs; their disks and containers are released (by the
        scheduler) as the tasks end. Then free the IPs still held for settled clusters and finished
        jobs (``sweeper.py``), whether or not the scheduler answered."""
        try:
            return self._kill_orphans()
        finally:
            self.ip_sweeper.run()

    def _kill_orphans(self) -> list[str]:
        unfinished = self.scheduler.unfinished_clusters(self.settings.origin)
        if not unfinished:
            return []
        with self.sessions() as session:
            known = dict(session.execute(select(Cluster.id, Cluster.state).where(Cluster.id.in_(unfinished))).all())
        orphans = sorted(c for c in unfinished if known.get(c, S.DESTROYED.value) == S.DESTROYED.value)
        for cluster_id in orphans:
            log.warning("cluster %s: %d tasks still run but the cluster is %s here; killing them", cluster_id,
                        unfinished[cluster_id], known.get(cluster_id, "unknown"))
            killed = self.scheduler.kill(cluster_id)
            if self.settings.network_pool:  # their floating IPs were held by this orchestrator
                self.network.release_many([t["member_id"] for t in killed])
        return orphans

    def expired(self) -> list[str]:
        """Clusters whose deadline has passed."""
        with self.sessions() as session:
            return list(session.scalars(select(Cluster.id).where(Cluster.deadline <= utcnow().replace(tzinfo=None))
                                        .where(Cluster.state.in_([s.value for s in FOLLOWED]))))

    def next_deadline(self) -> float | None:
        """Seconds until the earliest deadline still ahead (None: none; passed ones are ``expired``)."""
        with self.sessions() as session:
            earliest = session.scalar(select(Cluster.deadline).where(Cluster.deadline > utcnow().replace(tzinfo=None))
                                      .where(Cluster.state.in_([s.value for s in FOLLOWED]))
                                      .order_by(Cluster.deadline).limit(1))
        if earliest is None:
            return None
        return max(0.0, (as_utc(earliest) - utcnow()) / timedelta(seconds=1))


def _templates(cluster: Cluster, manifest: dict, member: Member, bound: dict,
               going: Sequence[PlannedMember], platform: Mapping[str, Any]) -> dict:
    """The context of ``member``'s templates among the cluster's members now, ``going`` leaving."""
    return member_context(identity(cluster), manifest, cluster.options, planned_of(member),
                          {m.member_id: m.ip for m in cluster.members if m.ip},
                          [planned_of(m) for m in cluster.members], bound, going, cluster.retired or (), platform)


def _last_line(output: str, default: str) -> str:
    """What a check said: its last line (the lines before are often a JVM's start-up noise)."""
    return next((line.strip() for line in reversed(output.splitlines()) if line.strip()), default)
