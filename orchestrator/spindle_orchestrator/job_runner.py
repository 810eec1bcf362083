"""Running jobs: each job's driver is a container of the product's job image, with a floating IP
on the cluster's network (executors connect back to drivers), the job's files at ``/job`` and
``/job/output`` for results. One thread per running job; after a restart the worker picks
RUNNING jobs up again and waits for their containers (or fails them if the container is gone)."""
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.types import EndpointConfig, Mount, NetworkingConfig
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import ReadTimeout
from sqlalchemy.orm import Session, sessionmaker

from spindle_common.clients import NetworkClient
from spindle_common.contracts import CLUSTER_LABEL, JOB_LABEL, OWNED_LABEL
from spindle_common.errors import ApiError
from spindle_orchestrator import jobs
from spindle_orchestrator.clusters import record_event, wake
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Cluster, Job
from spindle_orchestrator.render import RenderError, render_value

log = logging.getLogger("spindle.jobs")


def container_name(job_id: str) -> str:
    return f"spindle-job-{job_id}"


def lease_owner(job_id: str) -> str:
    return f"job-{job_id}"


# The runner only works on jobs it read from the database, and nothing deletes clusters (nor, hence,
# their jobs): a missing row is a bug, not a state to handle.
def _job(session: Session, job_id: str) -> Job:
    job = session.get(Job, job_id)
    if job is None:
        raise RuntimeError(f"job {job_id} is not in the database")
    return job


def _cluster(session: Session, cluster_id: str) -> Cluster:
    cluster = session.get(Cluster, cluster_id)
    if cluster is None:
        raise RuntimeError(f"cluster {cluster_id} is not in the database")
    return cluster


def driver_command(manifest: dict[str, Any], cluster: Cluster, job: Job, ip: str) -> list[str]:
    """The product's job command, rendered (peers' IPs, the job's main file, the driver's IP), then the job's args."""
    peers: dict[str, list[dict[str, Any]]] = {}
    for m in cluster.members:
        peers.setdefault(m.role, []).append({"id": m.member_id, "name": f"{m.role}-{m.index}", "ip": m.ip})
    context = {"cluster": {"id": cluster.id, "owner": cluster.owner, "product": cluster.product,
                           "version": cluster.version},
               "peers": peers, "settings": cluster.options.get("settings", {}),
               "job": {"id": job.id, "main": f"/job/{job.main}", "dir": "/job", "output": "/job/output"},
               "driver": {"ip": ip}}
    return render_value(manifest["jobs"]["command"], context, "jobs command") + list(job.args)


class JobRunner:
    def __init__(self, sessions: sessionmaker[Session], settings: Settings,
                 manifest_of: Callable[[str, str], dict[str, Any]], network: NetworkClient):
        self.sessions, self.settings, self.manifest_of, self.network = sessions, settings, manifest_of, network
        self.active: set[str] = set()
        self.lock = threading.Lock()

    def poll(self) -> None:
        """Start a thread for every PENDING or RUNNING job that has none."""
        with self.sessions() as session:
            waiting = [j.id for j in jobs.in_state(session, jobs.PENDING, jobs.RUNNING)]
        for job_id in waiting:
            with self.lock:
                if job_id in self.active:
                    continue
                self.active.add(job_id)
            threading.Thread(target=self._run, args=(job_id,), name=f"job-{job_id}", daemon=True).start()

    def stop_cluster_jobs(self, session: Session, cluster_id: str) -> bool:
        """The cluster is going away: stop its jobs' drivers (their threads record them KILLED and
        give back container and IP). True once none of its jobs runs any more."""
        running = False
        for job in jobs.of_cluster(session, cluster_id):
            if job.state == jobs.PENDING:
                jobs.finish(job, jobs.KILLED, "the cluster was deleted before the job started")
            elif job.state == jobs.RUNNING:
                running = True
                client = docker.from_env()
                try:
                    client.containers.get(container_name(job.id)).kill()
                except (NotFound, APIError):
                    pass
                finally:
                    client.close()
        return not running

    def _run(self, job_id: str) -> None:
        client = docker.from_env(timeout=60)
        try:
            container = self._start(client, job_id)
            if container is not None:
                self._wait(client, job_id, container)
        except Exception as exc:  # the job fails with the reason; the worker goes on
            log.exception("job %s failed", job_id)
            self._end(client, job_id, jobs.FAILED, f"{type(exc).__name__}: {exc}")
        finally:
            client.close()
            with self.lock:
                self.active.discard(job_id)

    def _start(self, client: docker.DockerClient, job_id: str):
        """A PENDING job gets its IP and container (state RUNNING); a RUNNING one gets its container back."""
        with self.sessions.begin() as session:
            job = _job(session, job_id)
            if job.state == jobs.RUNNING:
                try:
                    return client.containers.get(container_name(job_id))
                except NotFound:
                    jobs.finish(job, jobs.FAILED,
                                "the driver container is gone (the orchestrator restarted while it ran)")
                    return None
            cluster = _cluster(session, job.cluster_id)
            runner = self.manifest_of(cluster.product, cluster.version).get("jobs")
            if runner is None:
                jobs.finish(job, jobs.FAILED, f"{cluster.product} {cluster.version} does not run jobs")
                return None
            lease = self.network.allocate(lease_owner(job_id), self.settings.network_pool)
            try:
                command = driver_command(self.manifest_of(cluster.product, cluster.version), cluster, job,
                                         lease["address"])
                container = self._create(client, runner, job, command, lease)
            except (RenderError, ImageNotFound, APIError) as exc:
                self.network.release(lease_owner(job_id))
                jobs.finish(job, jobs.FAILED, f"the driver could not start: {exc}")
                return None
            job.state, job.container, job.ip = jobs.RUNNING, container.name, lease["address"]
            job.started_at, job.message = datetime.utcnow(), f"driver {container.name} running"
            record_event(session, job.cluster_id, "job", jobs.RUNNING, f"job {job.id}: {job.message}")
            return container

    def _create(self, client: docker.DockerClient, runner: dict[str, Any], job: Job, command: list[str],
                lease: dict[str, Any]):
        folder = jobs.job_dir(self.settings.jobs_dir, job.id)
        endpoint = EndpointConfig(version=client.api._version, ipv4_address=lease["address"])
        container_id = client.api.create_container(
            runner["image"], command=command, name=container_name(job.id), working_dir="/job",
            environment=runner.get("env", {}),
            labels={OWNED_LABEL: "true", JOB_LABEL: job.id, CLUSTER_LABEL: job.cluster_id},
            networking_config=NetworkingConfig({lease["docker_network"]: endpoint}),
            host_config=client.api.create_host_config(
                nano_cpus=int(runner.get("cpus", 1.0) * 1e9), mem_limit=f"{runner.get('mem_mb', 1024)}m",
                network_mode=lease["docker_network"],
                mounts=[Mount(target="/job", source=str(folder), type="bind", read_only=True),
                        Mount(target="/job/output", source=str(folder / "output"), type="bind")]),
        )["Id"]
        container = client.containers.get(container_id)
        container.start()
        return container

    def _wait(self, client: docker.DockerClient, job_id: str, container) -> None:
        try:
            code = container.wait(timeout=self.settings.job_timeout_s)["StatusCode"]
        except (ReadTimeout, RequestsConnectionError):
            container.kill()
            self._end(client, job_id, jobs.KILLED, f"no result within {self.settings.job_timeout_s:.0f} s",
                      logs_of=container)
            return
        except NotFound:
            code = None
        with self.sessions() as session:
            cluster_deleted = _cluster(session, _job(session, job_id).cluster_id).delete_requested
        if cluster_deleted:
            self._end(client, job_id, jobs.KILLED, "the cluster was deleted while the job ran", code, container)
        elif code == 0:
            self._end(client, job_id, jobs.SUCCEEDED, "the driver exited with 0", code, container)
        else:
            self._end(client, job_id, jobs.FAILED, f"the driver exited with {code}", code, container)

    def _end(self, client: docker.DockerClient, job_id: str, state: str, message: str, code: int | None = None,
             logs_of=None) -> None:
        """Record the end with the driver's logs, then give back its container and IP."""
        stdout = stderr = ""
        if logs_of is not None:
            try:
                stdout = logs_of.logs(stdout=True, stderr=False).decode(errors="replace")
                stderr = logs_of.logs(stdout=False, stderr=True).decode(errors="replace")
            except (NotFound, APIError):
                pass
        with self.sessions.begin() as session:
            job = _job(session, job_id)
            if job.state not in jobs.FINISHED:
                jobs.finish(job, state, message, code, stdout, stderr)
                record_event(session, job.cluster_id, "job", state, f"job {job_id}: {message}")
            wake(session, job.cluster_id)  # a cluster being destroyed may wait for this job
        try:
            client.containers.get(container_name(job_id)).remove(force=True)
        except NotFound:
            pass
        try:
            self.network.release(lease_owner(job_id))
        except ApiError as exc:
            if exc.status != 404:
                raise
