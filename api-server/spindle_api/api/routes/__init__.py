"""HTTP routes of api-server, one module per resource."""
from fastapi import APIRouter

from spindle_api.api.routes import (
    admin_clusters,
    admin_disks,
    admin_ip_pools,
    admin_metrics,
    capacity,
    cluster_metrics,
    clusters,
    datasets,
    jobs,
    member_exec,
    member_logs,
    member_terminal,
    products,
    quotas,
    status,
    tokens,
    users,
)

routers: list[APIRouter] = [status.router, users.router, tokens.router, products.router, clusters.router, jobs.router,
                            cluster_metrics.router, member_logs.router, member_exec.router, member_terminal.router,
                            capacity.router,
                            admin_clusters.router, admin_disks.router, admin_ip_pools.router, admin_metrics.router,
                            quotas.router, datasets.router]
