"""Admin: every user's clusters in one list."""
from fastapi import APIRouter

from spindle_api.api.deps import AdminUser, OrchestratorDep
from spindle_api.api.links import cluster_links
from spindle_api.api.params import ClusterPageToken, OwnerFilter, PageSize, ProductFilter, StateFilter
from spindle_api.api.routes.clusters import cluster_page
from spindle_api.schemas import ClusterPage
from spindle_common.errors import error_responses

router = APIRouter(prefix="/admin", tags=["admin: clusters"])


@router.get("/clusters", responses={200: {"description": "a page of clusters, newest first",
                                         "links": cluster_links("/items/0")},
                                    **error_responses(401, 403, 422, 502, 503)})
def all_clusters(_: AdminUser, orchestrator: OrchestratorDep, state: StateFilter = None, product: ProductFilter = None,
                 owner: OwnerFilter = None, page_size: PageSize = 50,
                 page_token: ClusterPageToken = None) -> ClusterPage:
    """Clusters of every user (or of ``owner``), filtered by state and product, in pages."""
    return cluster_page(orchestrator, owner, state, product, page_size, page_token)
