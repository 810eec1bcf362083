"""Running jobs: each job's driver is a Mesos task of its cluster (member id ``job-<job id>``),
placed by the scheduler like a member (its cpus and memory count in offers) and run by the
executor on whichever node the offer came from, with its own floating IP on the cluster's network
(executors connect back to drivers). Nothing of a job needs this orchestrator's host: the executor
fetches the job's files from ``<nodes_url>/internal/jobs/<id>/files`` (``Settings.public_url``, or
this orchestrator's own address) and puts the result back (exit code, logs, ``/job/output``) to
``…/result`` before the task ends.

The runner works inside the cluster's reconcile round (``lifecycle.py``), on the tasks that round
observed (the one scheduler call; a driver's task changes notify ``spindle_tasks`` like a
member's): a PENDING job gets its IP, its rendered command and its task; its task's state makes it
RUNNING, then SUCCEEDED / FAILED / KILLED (``jobs.step``), and its IP is given back. After a
restart the same round picks RUNNING jobs up from their tasks. A job that runs longer than
``job_timeout_s`` has its task killed; a cluster going away kills its jobs' tasks (``StopJobs``)."""
import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from spindle_common.clients import NetworkClient, SchedulerClient
from spindle_common.contracts import TERMINAL_TASK_STATES, ClusterState, TaskView, as_utc, utcnow
from spindle_common.errors import ApiError
from spindle_common.notify import EVENTS, notify
from spindle_orchestrator import bindings, jobs
from spindle_orchestrator.clusters import container_with_secret, record_event, with_keytab
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.kerberos import KerberosError
from spindle_orchestrator.models import Cluster, Job, identity
from spindle_orchestrator.render import (
    RenderError,
    bound_ids,
    platform_context,
    principals,
    render_value,
    with_shared,
)

log = logging.getLogger("spindle.jobs")
# Cluster states in which a PENDING job's driver is handed to the scheduler.
SERVING = (ClusterState.RUNNING.value, ClusterState.DEGRADED.value)


def container_name(job_id: str) -> str:
    """The driver's container, on whichever node runs it."""
    return f"spindle-job-{job_id}"


def lease_owner(job_id: str) -> str:
    """The driver's floating IP's owner in network-service, and its task's member id in the scheduler."""
    return f"job-{job_id}"


def driver_context(cluster: Cluster, job: Job, ip: str, bound: dict[str, Any] | None = None,
                   manifest: dict[str, Any] | None = None, platform: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What the product's job templates see: the cluster, its peers' IPs, settings and bindings
    (``bindings.context``), the job's main file, the driver's IP, the manifest's shared templates and
    the platform (``platform_context``)."""
    peers: dict[str, list[dict[str, Any]]] = {}
    for m in cluster.members:
        peers.setdefault(m.role, []).append({"id": m.member_id, "name": f"{m.role}-{m.index}", "ip": m.ip})
    return with_shared({"cluster": identity(cluster),
                        "peers": peers, "settings": cluster.options.get("settings", {}), "bound": bound or {},
                        "job": {"id": job.id, "main": f"/job/{job.main}", "dir": "/job", "output": "/job/output"},
                        "driver": {"ip": ip}, "platform": dict(platform or platform_context())}, manifest)


def driver_command(manifest: dict[str, Any], context: dict[str, Any], args: list[str]) -> list[str]:
    """The product's job command, rendered, then the job's args."""
    return render_value(manifest["jobs"]["command"], context, "jobs command") + list(args)


def held_cpus(manifest_cpus: float, setting: float) -> float:
    """What a driver holds in offers: ``job_cpus`` (at most what the manifest gives it), or all of
    the manifest's cpus when the setting is 0."""
    return min(setting, manifest_cpus) if setting > 0 else manifest_cpus


def stopping_reason(cluster: Cluster) -> str | None:
    """Why the cluster's jobs are being stopped, if they are."""
    if cluster.delete_requested or cluster.state in (ClusterState.DESTROYING.value, ClusterState.DESTROYED.value):
        return "the cluster was deleted"
    if cluster.state == ClusterState.FAILED.value:
        return "the cluster failed"
    return None


def deadline_of(job: Job, timeout_s: float) -> datetime:
    """When the job's time is up: ``timeout_s`` after its driver started (or it was submitted)."""
    return as_utc(job.started_at or job.created_at) + timedelta(seconds=timeout_s)


class JobRunner:
    def __init__(self, sessions: sessionmaker[Session], settings: Settings,
                 manifest_of: Callable[[str, str], dict[str, Any]], network: NetworkClient, scheduler: SchedulerClient):
        self.sessions, self.settings, self.manifest_of = sessions, settings, manifest_of
        self.network, self.scheduler = network, scheduler
        self.observed: dict[str, dict[str, TaskView]] = {}  # cluster id → its drivers' tasks, as last observed
        self.woken: set[str] = set()  # jobs past their time whose cluster was woken for it

    # --- in a cluster's round ---------------------------------------------------------------------
    def follow(self, session: Session, cluster: Cluster, tasks: dict[str, TaskView],
               retry: Callable[[str, float], None]) -> None:
        """The cluster's unfinished jobs, as their drivers' tasks (by member id) say. A job whose
        step fails (a service away) is left as it was and the cluster looked at again in 1 s."""
        if tasks:
            self.observed[cluster.id] = tasks
        else:
            self.observed.pop(cluster.id, None)
        for job in jobs.of_cluster(session, cluster.id):
            if job.state not in (jobs.PENDING, jobs.RUNNING):
                continue
            try:
                with session.begin_nested():
                    self._follow(session, cluster, job, tasks.get(lease_owner(job.id)))
            except Exception:  # one job's trouble must not stop the cluster's round
                log.exception("job %s: following its driver failed; retrying in 1 s", job.id)
                retry(cluster.id, 1.0)

    def _follow(self, session: Session, cluster: Cluster, job: Job, task: TaskView | None) -> None:
        stopping = stopping_reason(cluster)
        if job.container is None:  # not handed to the scheduler yet
            if stopping is None and cluster.state in SERVING:
                self._hand_over(session, cluster, job)
            return  # stopping: the StopJobs action ends it
        timeout = self.settings.job_timeout_s
        step = jobs.step(job.state, job.exit_code, task, stopping=stopping,
                         timed_out=deadline_of(job, timeout) <= utcnow(), timeout_s=timeout)
        if step.submit:
            self._hand_over(session, cluster, job)
            return
        if step.kill:
            log.info("job %s: no result within %.0f s; killing its driver", job.id, timeout)
            self.scheduler.kill_job(cluster.id, job.id)
        if step.finished:
            self._end(session, job, step.state, step.message, step.exit_code)
        elif step.state == jobs.RUNNING and job.state == jobs.PENDING:
            job.state, job.started_at, job.message = jobs.RUNNING, datetime.utcnow(), step.message
            record_event(session, job.cluster_id, "job", jobs.RUNNING, f"job {job.id}: {step.message}")
        elif step.message != job.message:
            job.message = step.message[:2000]

    def _hand_over(self, session: Session, cluster: Cluster, job: Job) -> None:
        """Hold the driver's IP, render its command and queue its task with the scheduler (each
        step gives the same answer again, so a repeat after a crash is harmless)."""
        try:
            manifest = self.manifest_of(cluster.product, cluster.version)
        except ApiError as exc:  # the catalog changed since the cluster was launched
            self._end(session, job, jobs.FAILED, f"the driver could not start: {exc.message}")
            return
        runner = manifest.get("jobs")
        if runner is None:
            self._end(session, job, jobs.FAILED, f"{cluster.product} {cluster.version} does not run jobs")
            return
        lease = None
        if self.settings.network_pool:
            try:
                lease = self.network.allocate(lease_owner(job.id), self.settings.network_pool)
            except ApiError as exc:
                if exc.status >= 500:
                    raise
                self._end(session, job, jobs.FAILED, f"the driver could not start: no IP: {exc.message}")
                return
        address = lease["address"] if lease else None
        try:
            context = driver_context(cluster, job, address or "", bindings.context(session, manifest, cluster.options),
                                     manifest, self.settings.platform)
            command = driver_command(manifest, context, job.args)
            env = render_value(runner.get("env", {}), context, "jobs env")
            names = principals(manifest, context, [cluster.id, *bound_ids(context["bound"])], "job_principals")
        except (RenderError, bindings.BindingGone) as exc:
            self._end(session, job, jobs.FAILED, f"the driver could not start: {exc}")
            return
        cpus = float(runner.get("cpus", 1.0))
        body: dict[str, Any] = {"job_id": job.id, "cpus": held_cpus(cpus, self.settings.job_cpus), "cpu_limit": cpus,
                "mem_mb": int(runner.get("mem_mb", 1024)),
                "container": {"image": runner["image"], "command": command, "env": env,
                              "security": runner.get("security", {})},
                "lease": {"address": lease["address"], "docker_network": lease["docker_network"]} if lease else None,
                "orchestrator_url": self.settings.nodes_url, "origin": self.settings.origin}
        # the cluster's data plane secret and network isolation
        body["container"] = container_with_secret(body["container"], cluster,
                                                  self.settings.nodes_url if lease else None)
        try:
            body["container"] = with_keytab(body["container"], names, self.settings.kdc_dir)
        except KerberosError as exc:
            self._end(session, job, jobs.FAILED, f"the driver could not start: its Kerberos keys: {exc}")
            return
        try:
            self.scheduler.launch_job(cluster.id, body)
        except ApiError as exc:
            if exc.status >= 500:
                raise
            if exc.code != "JOB_EXISTS":  # JOB_EXISTS: handed over before (with other settings): it runs
                self._end(session, job, jobs.FAILED, f"the driver could not start: {exc.code}: {exc.message}")
                return
        job.container, job.ip = lease_owner(job.id), address
        for changed in (cluster.id, *bindings.linked(session, cluster)):  # their peer sets changed (``peers.py``)
            notify(session, EVENTS, changed)
        job.message = "driver handed to the scheduler: waiting for an offer"

    def _end(self, session: Session, job: Job, state: str, message: str, exit_code: int | None = None) -> None:
        """Record the end (the logs are what the driver's executor put back), give back its IP."""
        jobs.finish(job, state, message, exit_code)
        record_event(session, job.cluster_id, "job", state, f"job {job.id}: {message}")
        self.woken.discard(job.id)
        if self.settings.network_pool:
            try:
                self.network.release(lease_owner(job.id))
            except ApiError as exc:
                if exc.status != 404:
                    raise

    def stop_cluster_jobs(self, session: Session, cluster: Cluster) -> bool:
        """The cluster is going away: kill its jobs' drivers through the scheduler (their tasks'
        ends record them KILLED, as ``follow`` sees them); jobs never handed over end at once.
        True once none of its jobs runs any more."""
        reason = stopping_reason(cluster) or "the cluster is going away"
        tasks = self.observed.get(cluster.id, {})
        running = False
        for job in jobs.of_cluster(session, cluster.id):
            if job.state not in (jobs.PENDING, jobs.RUNNING):
                continue
            if job.container is None:
                self._end(session, job, jobs.KILLED, f"{reason} before the job started")
                continue
            task = tasks.get(lease_owner(job.id))
            if task is None or not (task.kill_requested or task.state in TERMINAL_TASK_STATES):
                try:
                    self.scheduler.kill_job(cluster.id, job.id)
                except ApiError as exc:
                    if exc.status != 404:
                        raise
                    when = "while the job ran" if job.state == jobs.RUNNING else "before the job started"
                    self._end(session, job, jobs.KILLED, f"{reason} {when}", job.exit_code)  # it has no task
                    continue
            running = True
        return not running

    # --- time limits (the worker wakes the job's cluster) ------------------------------------------
    def _deadlines(self) -> list[tuple[datetime, str, str]]:
        with self.sessions() as session:
            return sorted((deadline_of(j, self.settings.job_timeout_s), j.id, j.cluster_id)
                          for j in jobs.in_state(session, jobs.PENDING, jobs.RUNNING) if j.id not in self.woken)

    def next_deadline(self) -> float | None:
        """Seconds until the earliest job's time is up (None: no job runs)."""
        deadlines = self._deadlines()
        if not deadlines:
            return None
        return max(0.0, (deadlines[0][0] - utcnow()) / timedelta(seconds=1))

    def expired(self) -> list[str]:
        """Clusters with a job whose time is up (each job once): their round kills its driver."""
        now, due = utcnow(), []
        for deadline, job_id, cluster_id in self._deadlines():
            if deadline > now:
                break
            self.woken.add(job_id)
            due.append(cluster_id)
        return due
