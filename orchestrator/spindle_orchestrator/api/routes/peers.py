"""For the executors: a cluster's peer set (network isolation), answered at once or, given the
version the caller has, when it changes (a long poll of at most ``wait`` seconds)."""
import asyncio
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from spindle_common.auth import Caller, require
from spindle_common.clients import NetworkClient
from spindle_common.errors import ApiError, error_responses
from spindle_common.isolation import PeerSet
from spindle_orchestrator import peers
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Cluster, identity
from spindle_orchestrator.render import RenderError, uses_kerberos

router = APIRouter(prefix="/internal/clusters/{cluster_id}", tags=["internal"])
ExecutorCaller = Annotated[Caller, Depends(require("service", "node"))]  # executors sign as nodes
# While waiting, the set is read again this often even without a notification (a driver's address
# is recorded without one).
RECHECK_S = 2.0
MAX_WAIT_S = 30.0


def pool_ranges(request: Request) -> peers.PoolRanges:
    state = request.app.state
    if getattr(state, "pool_ranges", None) is None:
        settings: Settings = state.settings
        client = NetworkClient(settings.network_service_url, settings.internal_token, actor="orchestrator")
        state.pool_ranges = peers.PoolRanges(client, settings.network_pool)
    return state.pool_ranges


@router.get("/peers", responses=error_responses(401, 403, 404, 422, 503))
async def cluster_peers(cluster_id: str, request: Request, _: ExecutorCaller,
                        known: Annotated[str, Query(max_length=64)] = "",
                        wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S)] = 0) -> PeerSet:
    """The addresses the cluster's members and unfinished job drivers hold, and the pool's ranges
    where other tenants are; with ``known`` (a version) and ``wait``, answered once it differs or
    ``wait`` has passed."""
    hub = request.app.state.event_hub
    ranges = pool_ranges(request)
    deadline = time.monotonic() + wait

    settings: Settings = request.app.state.settings
    catalog = request.app.state.catalog

    def kdc_of(cluster: Cluster) -> str:
        """The KDC's address for a cluster whose members get Kerberos keys (``render.uses_kerberos``)."""
        try:
            manifest = catalog.get(cluster.product, cluster.version)
        except ApiError:  # the catalog no longer has the product
            return ""
        context = {"settings": cluster.options.get("settings", {}), "cluster": identity(cluster),
                   "platform": settings.platform}
        try:
            return settings.kdc_address if uses_kerberos(manifest, context) else ""
        except RenderError:
            return ""

    def read() -> PeerSet | None:
        with hub.sessions() as session:
            return peers.peer_set(session, cluster_id, ranges.get(), kdc_of)

    async with hub.subscribe(cluster_id) as changed:
        while True:
            changed.clear()
            current = await hub.shared(cluster_id, read, max_age=RECHECK_S / 2)
            if current is None:
                raise ApiError(404, "CLUSTER_NOT_FOUND", f"no cluster {cluster_id}")
            left = deadline - time.monotonic()
            if current.version != known or left <= 0:
                return current
            try:
                await asyncio.wait_for(changed.wait(), min(left, RECHECK_S))
            except TimeoutError:
                pass
