"""The orchestrator's sweep of floating IPs: network-service's holdings compared with their holders.

The orchestrator owns every member's IP and DNS name (owner ``<cluster id>-<role>-<i>``) and every
job driver's IP (owner ``job-<job id>``). Each sweep (with the worker's, every ``sweep_interval_s``;
or once on ``POST /internal/sweeps``) lists the IPs held for at least ``ip_sweep_grace_s`` and frees,
with their DNS names, those whose holder is settled for good here: a DESTROYED cluster, a FAILED one
already cleaned up, a finished job. Those states never change back, so what is judged settled stays
so between the judgment and the release; a cluster being launched holds its IPs in a state that is
not settled, and is left alone. Owners this database has no cluster or job for are not its own
(another orchestrator's, an admin's): left alone, counted as foreign.
"""
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from spindle_common.clients import NetworkClient
from spindle_common.contracts import ClusterState, utcnow
from spindle_orchestrator import jobs
from spindle_orchestrator.models import Cluster, Job

log = logging.getLogger("spindle.sweeper")
MEMBER_OWNER = re.compile(r"^(c[0-9a-f]{10})-")  # clusters.new_cluster_id: "c" + 10 hex
JOB_OWNER = re.compile(r"^job-(j[0-9a-f]{10})$")  # job_runner.lease_owner


@dataclass
class IpVerdict:
    release: list[str] = field(default_factory=list)  # owners whose holder is settled for good
    kept: list[str] = field(default_factory=list)  # their cluster or job is live
    foreign: list[str] = field(default_factory=list)  # no cluster or job of this database


def settled_cluster(state: str, cleaned_up: bool) -> bool:
    return state == ClusterState.DESTROYED.value or (state == ClusterState.FAILED.value and cleaned_up)


def judge_ips(owners: Iterable[str], clusters: Mapping[str, tuple[str, bool]],
              job_states: Mapping[str, str]) -> IpVerdict:
    """Sort IP owners by their holder: ``clusters`` id → (state, cleaned_up), ``job_states`` id → state."""
    verdict = IpVerdict()
    for owner in sorted(set(owners)):
        member, job = MEMBER_OWNER.match(owner), JOB_OWNER.match(owner)
        if member and member.group(1) in clusters:
            settled = settled_cluster(*clusters[member.group(1)])
        elif job and job.group(1) in job_states:
            settled = job_states[job.group(1)] in jobs.FINISHED
        else:
            verdict.foreign.append(owner)
            continue
        (verdict.release if settled else verdict.kept).append(owner)
    return verdict


class IpSweeper:
    """Runs the IP sweep and keeps its counts (``GET /internal/sweeps``)."""

    def __init__(self, sessions, network: NetworkClient, grace_s: float):
        self.sessions, self.network, self.grace_s = sessions, network, grace_s
        self.lock = threading.Lock()
        self.runs = 0
        self.freed_total = 0
        self.last: dict[str, Any] = {}

    def run(self) -> dict[str, Any]:
        """One sweep: what it found and freed (also kept as ``last``)."""
        with self.lock:
            held = self.network.request("GET", "/allocations/held", params={"older_than_s": self.grace_s})
            owners = {h["owner"] for h in held}
            verdict = judge_ips(owners, *self._holders(owners))
            if verdict.release:
                # Settled states never change back, but look again right before freeing.
                again = judge_ips(verdict.release, *self._holders(verdict.release))
                if again.release:
                    self.network.release_many(again.release)
                    log.warning("sweep: freed the IPs and DNS names of %s (their cluster or job is settled)",
                                ", ".join(again.release))
                verdict.release = again.release
            self.runs += 1
            self.freed_total += len(verdict.release)
            self.last = {"at": utcnow().isoformat(), "freed": verdict.release, "kept": len(verdict.kept),
                         "foreign": verdict.foreign}
            return self.last

    def _holders(self, owners: Iterable[str]) -> tuple[dict[str, tuple[str, bool]], dict[str, str]]:
        cluster_ids = {m.group(1) for o in owners if (m := MEMBER_OWNER.match(o))}
        job_ids = {m.group(1) for o in owners if (m := JOB_OWNER.match(o))}
        with self.sessions() as session:
            clusters = {cid: (state, cleaned) for cid, state, cleaned in session.execute(
                select(Cluster.id, Cluster.state, Cluster.cleaned_up).where(Cluster.id.in_(cluster_ids)))} \
                if cluster_ids else {}
            job_states = dict(session.execute(select(Job.id, Job.state).where(Job.id.in_(job_ids))).all()) \
                if job_ids else {}
        return clusters, job_states

    def counts(self) -> dict[str, Any]:
        return {"runs": self.runs, "freed_total": self.freed_total, "last": self.last}
