"""static-web without a disk, on the running platform: members given ``{"hdd": 0}`` hold no disk and
still run, serving their own page (they used to exit at once copying the page to a missing /data/1,
so the cluster FAILED and gave its floating IPs back a moment after the launch); grown to two, the
first member's page (re-rendered in place, its reload a no-op without a disk) names both."""
import httpx
import pytest

from tests.integration.platform.test_resize import resized, wait_for
from tests.support.live_users import live_user
from tests.support.through_restarts import running_cluster

DISKLESS = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 64, "disks": {"hdd": 0}}},
            "wait_for_resources": True}


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "diskless") as client:
        yield client


def page(ip: str) -> str:
    answer = httpx.get(f"http://{ip}:8000/", timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_members_without_a_disk_run_serve_their_page_and_learn_their_peers(owner):
    with running_cluster(owner, "static-web", "1.0", DISKLESS) as cluster:
        (first,) = cluster["members"]
        assert first["disks"] == [] and first["ip"], first
        assert f"server-1 of {cluster['id']}" in page(first["ip"])
        grown = resized(owner, cluster, {"server": 2})
        assert all(m["disks"] == [] for m in grown["members"]), grown["members"]
        ips = [m["ip"] for m in grown["members"]]
        wait_for("the first member's page names both", lambda: all(ip in page(first["ip"]) for ip in ips))
        events = [(e.state, e.member_id, e.message) for e in owner.events(cluster)]
        assert ("RECONFIGURED", first["member_id"], "new files in place; reloaded") in events, events
        assert owner.cluster(cluster)["members"][0]["replacements"] == 0
