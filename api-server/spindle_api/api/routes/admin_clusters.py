"""Admin: every user's clusters in one list."""
from fastapi import APIRouter

from spindle_api.api.deps import AdminUser, OrchestratorDep
from spindle_api.api.routes.clusters import PageSize, StateFilter, cluster_page
from spindle_api.schemas import ClusterPage

router = APIRouter(prefix="/admin", tags=["admin: clusters"])


@router.get("/clusters")
def all_clusters(_: AdminUser, orchestrator: OrchestratorDep, state: StateFilter = None, product: str | None = None,
                 owner: str | None = None, page_size: PageSize = 50, page_token: str | None = None) -> ClusterPage:
    """Clusters of every user (or of ``owner``), filtered by state and product, in pages."""
    return cluster_page(orchestrator, owner, state, product, page_size, page_token)
