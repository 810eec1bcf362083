"""network-service's figures at /metrics (read from its tables at each scrape): floating IPs by pool,
in use or free, and how many have a DNS name."""
from spindle_common.metrics import QueryMetrics

FAMILIES = [
    ("gauge", "spindle_floating_ips", "Floating IPs by pool, in use (held by an owner) or free", ["pool", "state"],
     "SELECT p.name, CASE WHEN f.owner IS NULL THEN 'free' ELSE 'in_use' END, count(*) "
     "FROM network.floating_ips f JOIN network.pools p ON p.id = f.pool_id GROUP BY 1, 2"),
    ("gauge", "spindle_floating_ip_dns_names", "Floating IPs with a DNS name in Consul, by pool", ["pool"],
     "SELECT p.name, count(*) FROM network.floating_ips f JOIN network.pools p ON p.id = f.pool_id "
     "WHERE f.dns_name IS NOT NULL GROUP BY 1"),
]


def collector(database_url: str) -> QueryMetrics:
    return QueryMetrics(database_url, FAMILIES)
