"""disk-service's /metrics on a real PostgreSQL: disks by node, class and state (and their bytes)
follow allocation, release and wipe; a wipe is counted with the seconds it took; a node never heard from
has no heartbeat age; the HTTP counters name route templates."""
from disk_helpers import SERVICE, add_node
from prometheus_client.parser import text_string_to_metric_families

from spindle_common.metrics import DEV_METRICS_TOKEN


def scrape(api) -> dict[tuple, float]:
    answer = api.get("/metrics", headers={"Authorization": f"Bearer {DEV_METRICS_TOKEN}"})
    assert answer.status_code == 200, answer.text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def disks(samples: dict, node: str, disk_class: str, state: str) -> float:
    return samples.get(("spindle_disks", (("disk_class", disk_class), ("node", node), ("state", state))), 0)


def test_disk_figures_follow_allocation_release_and_wipe(api):
    add_node(api, "n1", {"hdd": 3, "ssd": 1})
    add_node(api, "n2", {"hdd": 2})
    samples = scrape(api)
    assert (disks(samples, "n1", "hdd", "free"), disks(samples, "n1", "ssd", "free"),
            disks(samples, "n2", "hdd", "free")) == (3, 1, 2)
    assert samples[("spindle_disk_bytes", (("disk_class", "hdd"), ("node", "n1"), ("state", "free")))] == 3 * (4 << 30)
    assert ("spindle_disk_wipes_total", (("disk_class", "hdd"), ("node", "n1"))) not in samples

    held = api.post("/allocations", json={"node": "n1", "disk_class": "hdd", "count": 2, "owner": "c1-worker-1"},
                    headers=SERVICE)
    assert held.status_code in (200, 201), held.text
    samples = scrape(api)
    assert (disks(samples, "n1", "hdd", "allocated"), disks(samples, "n1", "hdd", "free")) == (2, 1)

    released = api.post("/allocations/release", json={"owner": "c1-worker-1"}, headers=SERVICE).json()
    assert disks(scrape(api), "n1", "hdd", "wiping") == 2  # a remote node wipes its own
    assert api.post(f"/disks/{released[0]['id']}/wipe-result", json={"ok": True}, headers=SERVICE).status_code == 200
    samples = scrape(api)
    assert (disks(samples, "n1", "hdd", "wiping"), disks(samples, "n1", "hdd", "free")) == (1, 2)
    assert samples[("spindle_disk_wipes_total", (("disk_class", "hdd"), ("node", "n1")))] == 1
    assert samples[("spindle_disk_wipe_seconds_total", (("disk_class", "hdd"), ("node", "n1")))] >= 0
    assert ("spindle_node_heartbeat_age_seconds", (("node", "n1"),)) not in samples  # never beaten

    requests = {labels: value for (name, labels), value in samples.items() if name == "spindle_http_requests_total"}
    assert requests[(("method", "POST"), ("route", "/disks/{disk_id}/wipe-result"), ("service", "disk-service"),
                     ("status", "200"))] == 1
