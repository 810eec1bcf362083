"""Resizing running clusters through the public API on the running platform.

static-web 1 → 3 → 2: the added members run with fresh disks and floating IPs of their own, every
member's page (its config file, re-rendered with its peers and put into the running container, then
the product's reload) lists the members it has now; the removed member's container goes, its IP and
DNS name are released and its disk wiped. Spark 2 → 4 → 3 workers while a job runs: the application
gets executors on the new workers, loses the removed one's, and still counts every word exactly.
A plan shows where added members would go; bad counts are 422 and change nothing."""
import json
import time
from collections import Counter

import docker
import httpx
import pytest

from spindle_client.client import SpindleError
from spindle_common.errors import ApiError
from tests.support.jobs import JOBS, expected_counts
from tests.support.live_users import live_user
from tests.support.through_restarts import retrying, settled


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "resizer") as client:
        yield client




def resized(owner, cluster: dict, roles: dict[str, int]) -> dict:
    """The cluster once RUNNING with ``roles``' member counts (the resize is asked for first; until
    the worker takes it up the cluster still reads RUNNING with its old members)."""
    retrying(lambda: owner.resize(cluster, roles))
    deadline = time.monotonic() + 600
    while True:
        done = settled(owner, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert done["state"] == "RUNNING", (done["reason_code"], done["reason"])
        counts = {role: sum(1 for m in done["members"] if m["role"] == role) for role in roles}
        if counts == roles:
            return done
        assert time.monotonic() < deadline, f"still {counts} members, {roles} asked"
        time.sleep(1)


def page(ip: str) -> str:
    return httpx.get(f"http://{ip}:8000/index.html", timeout=5).text


def wait_for(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        time.sleep(1)
    return found


def test_static_web_grows_and_shrinks_and_every_member_knows_its_peers(owner, disk_admin, network_admin):
    options = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 96, "disks": {"hdd": 1}}},
               "wait_for_resources": True}
    cluster = retrying(lambda: owner.launch("static-web", "1.0", options))
    try:
        cluster = settled(owner, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        [first] = cluster["members"]

        plan = owner.plan_resize(cluster, {"server": 3})
        assert plan.placeable and sorted(m.member_id for m in plan.members) == [
            f"{cluster['id']}-server-2", f"{cluster['id']}-server-3"], plan
        for bad in ({"server": 6}, {"server": 0}, {"nosuch": 1}):
            with pytest.raises(SpindleError) as refused:
                owner.resize(cluster, bad)
            assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS"), bad
        assert owner.cluster(cluster)["state"] == "RUNNING" and len(owner.cluster(cluster)["members"]) == 1

        grown = resized(owner, cluster, {"server": 3})
        members = {m["member_id"].rsplit("-", 1)[1]: m for m in grown["members"]}
        assert sorted(members) == ["1", "2", "3"] and members["1"]["ip"] == first["ip"]
        ips = [m["ip"] for m in members.values()]
        assert len(set(ips)) == 3 and len({m["disks"][0]["id"] for m in members.values()}) == 3
        for member in members.values():  # each page names all three, the first's re-rendered in place
            assert all(ip in page(member["ip"]) for ip in ips), (member["member_id"], page(member["ip"]))
        events = [(e.state, e.member_id) for e in owner.events(cluster)]
        assert ("RECONFIGURED", first["member_id"]) in events

        removed = members["3"]
        shrunk = resized(owner, cluster, {"server": 2})
        assert sorted(m["member_id"] for m in shrunk["members"]) == sorted(m["member_id"] for m in grown["members"]
                                                                          if m is not removed)
        for member in shrunk["members"]:
            assert removed["ip"] not in page(member["ip"]) and member["ip"] in page(member["ip"])
        with pytest.raises(ApiError) as released:
            network_admin.request("GET", "/allocations", params={"owner": removed["member_id"]})
        assert released.value.code == "NOT_ALLOCATED", "its IP and DNS name are released"
        client = docker.from_env()
        try:
            assert not client.containers.list(all=True, filters={"label": f"io.spindle.member={removed['member_id']}"})
        finally:
            client.close()
        wait_for("the removed member's disk wiped and free",
                 lambda: disk_admin.request("GET", f"/disks/{removed['disks'][0]['id']}")["state"] == "free")
        assert ("REMOVED", removed["member_id"]) in [(e.state, e.member_id) for e in owner.events(cluster)]
    finally:
        retrying(lambda: owner.delete(cluster))
        settled(owner, cluster, ("DESTROYED",), timeout=300)


SLOW = ["20000", "48", "2.5"]  # lines, partitions, seconds per task: about 2 minutes on 2 worker cores


@pytest.mark.slow  # about 5 minutes on 2 cores
def test_spark_grows_to_four_workers_and_shrinks_to_three_while_a_job_runs(owner):
    worker = {"count": 2, "cpus": 0.25, "mem_mb": 1536, "disks": {"hdd": 1}}
    cluster = retrying(lambda: owner.launch("spark", "3.5", {"roles": {"worker": worker}, "wait_for_resources": True}))
    try:
        cluster = settled(owner, cluster, ("RUNNING", "FAILED"), timeout=900)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        before = {m["member_id"]: m for m in cluster["members"] if m["role"] == "worker"}
        job = owner.submit(cluster, JOBS / "spark_slow_wordcount.py", args=SLOW)
        wait_for("the job running", lambda: owner.job(cluster, job["id"])["state"] == "RUNNING", 300)
        time.sleep(10)  # its executors started on the first two workers

        grown = resized(owner, cluster, {"worker": 4})
        workers = {m["member_id"]: m for m in grown["members"] if m["role"] == "worker"}
        new = [m for member_id, m in workers.items() if member_id not in before]
        assert len(new) == 2
        old_ips = {m["ip"] for m in before.values()}
        old_disks = {d["id"] for m in before.values() for d in m["disks"]}
        assert all(m["ip"] not in old_ips and {d["id"] for d in m["disks"]}.isdisjoint(old_disks) for m in new)
        assert owner.job(cluster, job["id"])["state"] == "RUNNING", "the resize did not end the job"
        time.sleep(20)  # the new workers' executors take tasks

        shrunk = resized(owner, cluster, {"worker": 3})
        assert len([m for m in shrunk["members"] if m["role"] == "worker"]) == 3

        done = wait_for("the job's end", lambda: (j := owner.job(cluster, job["id"]))["state"] in (
            "SUCCEEDED", "FAILED", "KILLED") and j, 900)
        assert done["state"] == "SUCCEEDED", (done["message"], done["stderr"][-3000:])
        result = json.loads(next(line for line in done["stdout"].splitlines() if line.startswith("RESULT "))[7:])
        assert Counter(result["counts"]) == expected_counts(int(SLOW[0]))
        new_hosts = {m["member_id"].removeprefix(f"{cluster['id']}-") for m in new}
        assert new_hosts & set(result["hosts"]), f"no task ran on the new workers {new_hosts}: {result['hosts']}"
    finally:
        retrying(lambda: owner.delete(cluster))
        settled(owner, cluster, ("DESTROYED",), timeout=300)
