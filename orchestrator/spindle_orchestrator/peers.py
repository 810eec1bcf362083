"""Who a cluster's containers may talk to (``spindle_common.isolation``): the addresses its members
and unfinished job drivers hold — and those of the clusters it binds or is bound by (``bindings``) —
and the pool's ranges where every other tenant's addresses are.

The executors of a cluster's containers ask for it when they start one and then wait here for it to
change (``GET /internal/clusters/{id}/peers?known=<version>``), so a new job driver or a replaced
member is let in everywhere within moments; see ``docs/ARCHITECTURE.md``, "Network isolation"."""
import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.clients import ServiceClient
from spindle_common.isolation import PeerSet
from spindle_orchestrator import bindings, jobs
from spindle_orchestrator.models import Cluster, Job, Member

# Seconds the pool's ranges are kept before network-service is asked again.
POOL_TTL_S = 60.0


def addresses(session: Session, cluster_ids: list[str]) -> list[str]:
    """Every address the clusters' members and unfinished job drivers hold."""
    members = session.scalars(select(Member.ip).where(Member.cluster_id.in_(cluster_ids), Member.ip.is_not(None)))
    drivers = session.scalars(select(Job.ip).where(Job.cluster_id.in_(cluster_ids), Job.ip.is_not(None),
                                                   Job.state.not_in(jobs.FINISHED)))
    return sorted({*members, *drivers})


def peer_set(session: Session, cluster_id: str, pool: "PoolFacts",
             kdc_of: Callable[[Cluster], str] = lambda cluster: "") -> PeerSet | None:
    """The cluster's peer set, its bound clusters' addresses included, and the KDC's address when it
    needs one (``kdc_of``; None: no such cluster)."""
    cluster = session.get(Cluster, cluster_id)
    if cluster is None:
        return None
    return PeerSet(cluster_id=cluster_id, peers=addresses(session, [cluster_id, *bindings.linked(session, cluster)]),
                   tenant_ranges=pool.tenant_ranges, platform=pool.platform, kdc=kdc_of(cluster)).versioned()


class PoolFacts(NamedTuple):
    tenant_ranges: list[str]  # the pool's floating and Docker-automatic CIDRs
    platform: list[str]  # the platform's own addresses in them (the gateway)


class PoolRanges:
    """The floating-IP pool's ``PoolFacts``, read from network-service and kept ``POOL_TTL_S``;
    nothing when the platform has no pool."""

    def __init__(self, client: ServiceClient, pool: str):
        self.client, self.pool = client, pool
        self.lock = threading.Lock()
        self.facts = PoolFacts([], [])
        self.read_at = float("-inf")

    def get(self) -> PoolFacts:
        if not self.pool:
            return self.facts
        with self.lock:
            if time.monotonic() - self.read_at > POOL_TTL_S:
                answer: dict[str, Any] = self.client.request("GET", f"/pools/{self.pool}")
                self.facts = PoolFacts(sorted({answer["floating_cidr"], answer["auto_cidr"]}), [answer["gateway"]])
                self.read_at = time.monotonic()
            return self.facts
