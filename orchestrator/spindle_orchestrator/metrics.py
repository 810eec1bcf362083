"""The orchestrator's figures at /metrics (read from its tables at each scrape): clusters (launches) by
product and state, members by role and state, jobs by state."""
from spindle_common.metrics import QueryMetrics

FAMILIES = [
    ("gauge", "spindle_clusters", "Clusters by product and state", ["product", "state"],
     "SELECT product, state, count(*) FROM orchestrator.clusters GROUP BY 1, 2"),
    ("gauge", "spindle_members", "Members of clusters not yet destroyed, by product, role and state",
     ["product", "role", "state"],
     "SELECT c.product, m.role, m.state, count(*) FROM orchestrator.members m "
     "JOIN orchestrator.clusters c ON c.id = m.cluster_id WHERE c.state <> 'DESTROYED' GROUP BY 1, 2, 3"),
    ("gauge", "spindle_jobs", "Jobs by state", ["state"],
     "SELECT state, count(*) FROM orchestrator.jobs GROUP BY 1"),
]


def collector(database_url: str) -> QueryMetrics:
    return QueryMetrics(database_url, FAMILIES)
