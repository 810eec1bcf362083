"""The scheduler's figures at /metrics: placement decisions as they are made; tasks (members and job
drivers) by state and node and releases still owed, read from its tables at each scrape."""
from prometheus_client import Counter

from spindle_common.metrics import QueryMetrics
from spindle_scheduler.store import PLACED_STATES

_PLACED = ", ".join(f"'{state}'" for state in sorted(PLACED_STATES))

# One decision per cluster (all its members at once) or per job driver, on each round of offers:
# placed, waiting (does not fit the offers held), hold_failed (disk-service refused the disks).
PLACEMENTS = Counter("spindle_placements", "Placement decisions, by outcome", ["outcome"], registry=None)

FAMILIES = [
    ("gauge", "spindle_tasks", "Scheduler tasks by state and node (none: not placed)", ["state", "node"],
     "SELECT state, coalesce(hostname, 'none'), count(*) FROM scheduler.tasks GROUP BY 1, 2"),
    # What placed tasks hold on each node (their requests), against the node's own figures (disk-service).
    ("gauge", "spindle_node_allocated_cpus", "CPUs held by placed tasks, by node", ["node"],
     "SELECT hostname, sum(CAST(request->>'cpus' AS float)) FROM scheduler.tasks WHERE hostname IS NOT NULL "
     f"AND state IN ({_PLACED}) GROUP BY 1"),
    ("gauge", "spindle_node_allocated_mem_mb", "Memory (MB) held by placed tasks, by node", ["node"],
     "SELECT hostname, sum(CAST(request->>'mem_mb' AS float)) FROM scheduler.tasks WHERE hostname IS NOT NULL "
     f"AND state IN ({_PLACED}) GROUP BY 1"),
    ("gauge", "spindle_task_releases_owed", "Tasks whose disks and IPs are still owed a release", [],
     "SELECT count(*) FROM scheduler.tasks WHERE release_owed"),
]


def collectors(database_url: str) -> list:
    return [QueryMetrics(database_url, FAMILIES), PLACEMENTS]
