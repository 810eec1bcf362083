"""disk-service's figures at /metrics (read from its tables at each scrape): disks by node, class
and state with their bytes, wipes done and the seconds they took, and each node's heartbeat age."""
from spindle_common.contracts import DISK_STATES
from spindle_common.metrics import QueryMetrics

FAMILIES = [
    # Every state of every class a node has, 0 included: a chart's line goes back to 0 when the last
    # disk leaves a state (a series that stops would keep showing its last value).
    ("gauge", "spindle_disks", "Disks by node, class and state", ["node", "disk_class", "state"],
     "SELECT n.name, c.disk_class, s.state, count(d.id) FROM disk.nodes n "
     "JOIN (SELECT DISTINCT node_id, disk_class FROM disk.disks) c ON c.node_id = n.id "
     f"CROSS JOIN unnest(ARRAY[{', '.join(repr(state) for state in DISK_STATES)}]) AS s(state) "
     "LEFT JOIN disk.disks d ON d.node_id = n.id AND d.disk_class = c.disk_class AND d.state = s.state "
     "GROUP BY 1, 2, 3"),
    ("gauge", "spindle_disk_bytes", "Bytes of the disks by node, class and state", ["node", "disk_class", "state"],
     "SELECT n.name, d.disk_class, d.state, sum(d.size_bytes) FROM disk.disks d "
     "JOIN disk.nodes n ON n.id = d.node_id GROUP BY 1, 2, 3"),
    # A wipe: a disk's change from wiping to free, timed from its last change to wiping before that.
    ("counter", "spindle_disk_wipes", "Wipes done (wiping → free), by node and class", ["node", "disk_class"],
     "SELECT n.name, d.disk_class, count(*) FROM disk.disk_transitions t JOIN disk.disks d ON d.id = t.disk_id "
     "JOIN disk.nodes n ON n.id = d.node_id WHERE t.from_state = 'wiping' AND t.to_state = 'free' GROUP BY 1, 2"),
    ("counter", "spindle_disk_wipe_seconds", "Seconds wipes took (released to free), by node and class",
     ["node", "disk_class"],
     "SELECT n.name, d.disk_class, coalesce(sum(extract(epoch FROM t.at - s.at)), 0) "
     "FROM disk.disk_transitions t JOIN disk.disks d ON d.id = t.disk_id JOIN disk.nodes n ON n.id = d.node_id "
     "CROSS JOIN LATERAL (SELECT max(w.at) AS at FROM disk.disk_transitions w WHERE w.disk_id = t.disk_id "
     "AND w.to_state = 'wiping' AND w.at <= t.at) s "
     "WHERE t.from_state = 'wiping' AND t.to_state = 'free' AND s.at IS NOT NULL GROUP BY 1, 2"),
    ("gauge", "spindle_node_cpus", "CPUs of each node (as registered)", ["node"],
     "SELECT name, cpus FROM disk.nodes WHERE cpus IS NOT NULL"),
    ("gauge", "spindle_node_mem_mb", "Memory (MB) of each node (as registered)", ["node"],
     "SELECT name, mem_mb FROM disk.nodes WHERE mem_mb IS NOT NULL"),
    ("gauge", "spindle_node_heartbeat_age_seconds", "Seconds since each node agent's last heartbeat", ["node"],
     "SELECT name, extract(epoch FROM now() - last_seen_at) FROM disk.nodes WHERE last_seen_at IS NOT NULL"),
]


def collector(database_url: str) -> QueryMetrics:
    return QueryMetrics(database_url, FAMILIES)
