"""HTTP routes of orchestrator, one module per resource."""
from fastapi import APIRouter

from spindle_orchestrator.api.routes import clusters, datasets, jobs, peers, quotas, sweeps

routers: list[APIRouter] = [clusters.router, datasets.router, jobs.router, jobs.internal_router, peers.router,
                            quotas.router, sweeps.router]
