"""The cluster state machine. ``advance(cluster_id)`` does one step for one cluster in its own
transaction (row locked, SKIP LOCKED), so a crash at any point resumes from the last committed
state: every step is safe to repeat (IP holds and scheduler launches are idempotent per member).

PENDING → SCHEDULING (or QUEUED) → DEPLOYING → CONFIGURING → RUNNING; any → FAILED(reason) with
clean-up; DESTROYING → DESTROYED.
"""
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from spindle_common.clients import DiskClient, NetworkClient, SchedulerClient
from spindle_common.consul import ConsulClient
from spindle_common.errors import ApiError
from spindle_orchestrator import jobs
from spindle_orchestrator.clusters import record_event
from spindle_orchestrator.job_runner import JobRunner
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Cluster, Member
from spindle_orchestrator.render import RenderError, plan_members, render_member
from spindle_orchestrator.states import (
    CONFIGURING, DEPLOYING, DESTROYED, DESTROYING, FAILED, NOT_LAUNCHED, PENDING, QUEUED, RUNNING, SCHEDULING,
    TASK_FAILURES, TASK_RUNNING, TASK_TERMINAL,
)

log = logging.getLogger("spindle.lifecycle")
ManifestFn = Callable[[str, str], dict[str, Any]]


def now() -> datetime:
    return datetime.utcnow()


class Lifecycle:
    def __init__(self, sessions: sessionmaker[Session], settings: Settings, manifest_of: ManifestFn,
                 scheduler: SchedulerClient, network: NetworkClient, consul: ConsulClient, disks: DiskClient):
        self.sessions = sessions
        self.settings = settings
        self.manifest_of = manifest_of
        self.scheduler = scheduler
        self.network = network
        self.consul = consul
        self.disks = disks
        self.jobs = JobRunner(sessions, settings, manifest_of, network)

    # --- driving ----------------------------------------------------------------------------
    def advance(self, cluster_id: str) -> None:
        with self.sessions.begin() as session:
            cluster = session.scalar(select(Cluster).where(Cluster.id == cluster_id).with_for_update(skip_locked=True))
            if cluster is None:
                return  # another worker holds it
            if cluster.delete_requested and cluster.state not in (DESTROYING, DESTROYED):
                self._move(session, cluster, DESTROYING, "deletion requested")
            step = {PENDING: self._schedule, QUEUED: self._track, SCHEDULING: self._track, DEPLOYING: self._track,
                    RUNNING: self._track, CONFIGURING: self._configure, DESTROYING: self._destroy,
                    FAILED: self._clean_up_failed}.get(cluster.state)
            if step:
                step(session, cluster)

    def _move(self, session: Session, cluster: Cluster, state: str, message: str = "",
              deadline_s: float | None = None) -> None:
        log.info("cluster %s: %s → %s %s", cluster.id, cluster.state, state, message)
        cluster.state = state
        cluster.deadline = now() + timedelta(seconds=deadline_s) if deadline_s else None
        record_event(session, cluster.id, "cluster", state, message)

    def _fail(self, session: Session, cluster: Cluster, code: str, reason: str) -> None:
        cluster.reason_code, cluster.reason, cluster.cleaned_up = code, reason[:2000], False
        self._move(session, cluster, FAILED, f"{code}: {reason}")

    # --- PENDING: render configuration, hold IPs, hand members to the scheduler -----------------
    def _schedule(self, session: Session, cluster: Cluster) -> None:
        try:
            manifest = self.manifest_of(cluster.product, cluster.version)
        except ApiError as exc:  # the catalog changed since the launch was accepted
            return self._fail(session, cluster, exc.code, exc.message)
        try:
            planned = plan_members(cluster.id, manifest, cluster.options)
            pool = self.settings.network_pool
            leases = {m.member_id: self.network.allocate(
                m.member_id, pool, dns_service=cluster.id, dns_name=m.name,
                health_tcp_port=(manifest["roles"][m.role].get("health") or {}).get("tcp_port")) for m in planned} if pool else {}
            ips = {member_id: lease["address"] for member_id, lease in leases.items()}
            context = {"id": cluster.id, "owner": cluster.owner, "product": cluster.product, "version": cluster.version}
            specs = []
            for m in planned:
                container = render_member(context, manifest, cluster.options, m, ips, planned)
                specs.append({"member_id": m.member_id, "role": m.role, "cpus": m.cpus, "mem_mb": m.mem_mb,
                              "disks": m.disks, "network_pool": pool or None, "container": container,
                              "restart": manifest["roles"][m.role].get("restart", "never")})
        except RenderError as exc:
            return self._fail(session, cluster, "CONFIG_RENDER_FAILED", str(exc))
        except ApiError as exc:
            return self._fail(session, cluster, "IP_UNAVAILABLE" if exc.status < 500 else "SERVICE_UNAVAILABLE",
                              exc.message)
        existing = {m.member_id: m for m in cluster.members}
        for m, spec in zip(planned, specs):
            row = existing.get(m.member_id) or Member(member_id=m.member_id, cluster_id=cluster.id)
            row.role, row.index, row.state, row.ip, row.spec = m.role, m.index, NOT_LAUNCHED, ips.get(m.member_id), spec
            row.dns_name = leases[m.member_id]["dns"] if m.member_id in leases else None
            row.ports = manifest["roles"][m.role].get("ports", [])
            row.message, row.disks = row.message or "", row.disks or []
            session.add(row)
        try:
            self.scheduler.launch({"cluster_id": cluster.id, "strategy": cluster.options.get("strategy", "spread"),
                                   "members": specs, "origin": self.settings.origin})
        except ApiError as exc:
            if exc.code != "CLUSTER_EXISTS":  # CLUSTER_EXISTS: we launched before a crash; carry on
                return self._fail(session, cluster, "SCHEDULER_REJECTED", f"{exc.code}: {exc.message}")
        if cluster.options.get("wait_for_resources"):
            self._move(session, cluster, QUEUED, f"{len(specs)} members queued until resources are free")
        else:
            self._move(session, cluster, SCHEDULING, f"placing {len(specs)} members",
                       self.settings.scheduling_timeout_s)

    # --- SCHEDULING / QUEUED / DEPLOYING / RUNNING: follow the members' tasks -----------------
    def _track(self, session: Session, cluster: Cluster) -> None:
        tasks = {t["member_id"]: t for t in self.scheduler.tasks(cluster.id)}
        members = cluster.members
        for member in members:
            task = tasks.get(member.member_id)
            if task and task.get("replacements", 0) > member.replacements:
                member.replacements = task["replacements"]
                record_event(session, cluster.id, "member", "REPLACED",
                             f"replacement {member.replacements} after {task['last_failure']}", member.member_id)
            if task and (task["state"], task["message"]) != (member.state, member.message):
                member.state, member.message = task["state"], task["message"]
                member.node, member.ip = task["hostname"], task["ip"] or member.ip
                if len(member.disks) != len(task["disk_roots"]):
                    member.disks = self._member_disks(member.member_id, task["disk_roots"])
                record_event(session, cluster.id, "member", task["state"], task["message"], member.member_id)
        states = [m.state for m in members]
        failed = [m for m in members if m.state in TASK_FAILURES or (cluster.state == RUNNING and m.state in TASK_TERMINAL)]
        expired = cluster.deadline is not None and now() > cluster.deadline
        if failed:
            code = "MEMBER_LOST" if cluster.state == RUNNING else "MEMBER_FAILED"
            self._fail(session, cluster, code, "; ".join(f"{m.member_id}: {m.state} {m.message}" for m in failed))
        elif cluster.state == RUNNING:
            return
        elif states and all(s == TASK_RUNNING for s in states):
            self._move(session, cluster, CONFIGURING, "all members healthy", self.settings.configuring_timeout_s)
        elif any(s != NOT_LAUNCHED for s in states) and cluster.state != DEPLOYING:
            self._move(session, cluster, DEPLOYING, "members placed, starting containers", self.settings.deploying_timeout_s)
        elif expired and cluster.state == SCHEDULING:
            why = next((m.message for m in members if m.message), "no offer fitted")
            self._fail(session, cluster, "UNPLACEABLE", why)
        elif expired and cluster.state == DEPLOYING:
            slow = [m.member_id for m in members if m.state != TASK_RUNNING]
            self._fail(session, cluster, "DEPLOY_TIMEOUT",
                       f"members {', '.join(slow)} not healthy within {self.settings.deploying_timeout_s:.0f} s")

    def _member_disks(self, member_id: str, roots: list[str]) -> list[dict[str, Any]]:
        """The member's whole disks as it sees them (``/data/N``) with what disk-service knows of each."""
        held = {d["mount_point"]: d for d in self.disks.held_by(member_id)} if roots else {}
        facts = ("id", "device_path", "disk_class", "size_bytes")
        return [{"container_path": f"/data/{i}", "mount_point": root,
                 **{k: held[root][k] for k in facts if root in held}} for i, root in enumerate(roots, start=1)]

    # --- CONFIGURING: service discovery --------------------------------------------------------
    def _configure(self, session: Session, cluster: Cluster) -> None:
        """Members' DNS names are registered in Consul (by network-service, with the product's
        health check) since their IPs were held; here the orchestrator confirms Consul sees them."""
        passing = {e["Service"]["ID"] for e in self.consul.service_health(cluster.id)
                   if all(c["Status"] == "passing" for c in e["Checks"])}
        waiting = [m.member_id for m in cluster.members if m.dns_name and f"member-{m.member_id}" not in passing]
        if waiting:  # Consul's DNS answers only for members whose health check passes
            if cluster.deadline is not None and now() > cluster.deadline:
                self._fail(session, cluster, "DISCOVERY_UNHEALTHY", f"not passing in Consul: {', '.join(waiting)}")
            return
        for member in cluster.members:
            record_event(session, cluster.id, "consul", "REGISTERED", member.dns_name or "no DNS name", member.member_id)
        self._move(session, cluster, RUNNING, "every member healthy and resolvable")

    # --- DESTROYING / FAILED: give everything back ---------------------------------------------
    def _release_all(self, session: Session, cluster: Cluster) -> bool:
        """Stop jobs and kill tasks, then (once all ended) deregister and free IPs. True when nothing is left."""
        if not self.jobs.stop_cluster_jobs(session, cluster.id):
            return False
        try:
            tasks = self.scheduler.kill(cluster.id)
        except ApiError as exc:
            if exc.status != 404:
                raise
            tasks = []
        if any(t["state"] not in TASK_TERMINAL for t in tasks):
            return False
        for member in cluster.members:
            try:
                self.network.release(member.member_id)
            except ApiError as exc:
                if exc.status >= 500:
                    raise
            if member.state not in TASK_TERMINAL:
                member.state = "TASK_KILLED"
        return True

    def sweep(self) -> list[str]:
        """Kill what the scheduler still runs for clusters this orchestrator has destroyed or does
        not know; their tasks' disks, IPs and containers are released as the tasks end."""
        unfinished = self.scheduler.unfinished_clusters(self.settings.origin)
        if not unfinished:
            return []
        with self.sessions() as session:
            known = dict(session.execute(select(Cluster.id, Cluster.state).where(Cluster.id.in_(unfinished))).all())
        orphans = sorted(c for c in unfinished if known.get(c, DESTROYED) == DESTROYED)
        for cluster_id in orphans:
            log.warning("cluster %s: %d tasks still run but the cluster is %s here; killing them", cluster_id,
                        unfinished[cluster_id], known.get(cluster_id, "unknown"))
            self.scheduler.kill(cluster_id)
        return orphans

    def _destroy(self, session: Session, cluster: Cluster) -> None:
        if self._release_all(session, cluster):
            removed = jobs.remove_files(self.settings.jobs_dir, session, cluster.id)
            self._move(session, cluster, DESTROYED, "every container removed, disks wiped, IPs freed"
                       + (f", files of {removed} jobs removed" if removed else ""))

    def _clean_up_failed(self, session: Session, cluster: Cluster) -> None:
        if not cluster.cleaned_up and self._release_all(session, cluster):
            cluster.cleaned_up = True
            record_event(session, cluster.id, "cleanup", "DONE", "resources of the failed launch released")
