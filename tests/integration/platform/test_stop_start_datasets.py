"""Stop/start and keeping a cluster's disks as a dataset, through the public API on the running platform.

Stop: a static-web cluster (2 members, an hdd each) with a file written on each member's disk is
stopped: no container of it runs, its members' disks stay allocated to them and its floating IPs
stay held, and its cpus and memory leave the owner's quota usage. Started again: the same IPs and
disks, the files are served again. Keep my data: deleted with ``keep_disks`` the disks become the
owner's dataset (counted against the disk quota, held for the dataset in disk-service, invisible to
others); a new launch attaching it serves the old file; deleting that cluster normally wipes them.
A dataset no one attaches is reclaimed (wiped)."""
import time
import uuid

import docker
import httpx
import pytest

from spindle_client.client import SpindleError
from tests.support.live_users import live_user
from tests.support.through_restarts import retrying, settled

LAUNCH = {"roles": {"server": {"count": 2, "cpus": 0.1, "mem_mb": 96, "disks": {"hdd": 1}}},
          "wait_for_resources": True}
ONE = {"roles": {"server": {"count": 1, "cpus": 0.1, "mem_mb": 96, "disks": {"hdd": 1}}}, "wait_for_resources": True}


@pytest.fixture(scope="module")
def owner(database_url):
    with live_user(database_url, "stopper") as client:
        yield client




def write(owner, cluster, member: str, name: str, text: str) -> None:
    """A file on the member's first dedicated disk (which static-web serves), written by a command in it."""
    path = f"/clusters/{cluster['owner']}/static-web/1.0/{cluster['id']}/members/{member}/exec"
    answer = httpx.post(f"http://127.0.0.1:8080{path}", json={"command": ["sh", "-c", f"echo {text} > /data/1/{name}"]},
                        headers={"Authorization": f"Bearer {owner.token}"}, timeout=60)
    assert answer.status_code == 200 and '"exit_code": 0' in answer.text, answer.text


def served(ip: str, name: str) -> str:
    deadline = time.monotonic() + 30
    while True:
        try:
            answer = httpx.get(f"http://{ip}:8000/{name}", timeout=3)
            if answer.status_code == 200:
                return answer.text.strip()
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"nothing served at {ip}:8000/{name}"
        time.sleep(1)


def launched(owner, options: dict) -> dict:
    cluster = retrying(lambda: owner.launch("static-web", "1.0", options))
    running = settled(owner, cluster, ("RUNNING", "FAILED"), timeout=600)
    assert running["state"] == "RUNNING", (running["reason_code"], running["reason"])
    return running


def destroyed(owner, cluster: dict, **keep) -> dict:
    retrying(lambda: owner.delete(cluster, **keep))
    return settled(owner, cluster, ("DESTROYED",), timeout=300)


def containers_of(cluster_id: str) -> list[str]:
    client = docker.from_env()
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": f"io.spindle.cluster={cluster_id}"})]
    finally:
        client.close()


def test_stop_keeps_ips_disks_and_data_and_start_brings_them_back(owner, disk_admin, network_admin):
    cluster = launched(owner, LAUNCH)
    before = {m["member_id"]: (m["ip"], [d["mount_point"] for d in m["disks"]]) for m in cluster["members"]}
    marks = {m["member_id"]: f"kept-{uuid.uuid4().hex[:8]}" for m in cluster["members"]}
    for member_id, mark in marks.items():
        write(owner, cluster, member_id, "kept.txt", mark)
    usage = owner.quota().usage
    try:
        retrying(lambda: owner.stop(cluster))
        stopped = settled(owner, cluster, ("STOPPED", "FAILED"), timeout=300)
        assert stopped["state"] == "STOPPED", (stopped["reason_code"], stopped["reason"])
        # No container of it runs; every member still holds its disks and its floating IP.
        deadline = time.monotonic() + 60
        while containers_of(cluster["id"]) and time.monotonic() < deadline:
            time.sleep(1)
        assert containers_of(cluster["id"]) == []
        for member_id, (ip, mounts) in before.items():
            held = disk_admin.held_by(member_id)
            assert sorted(d["mount_point"] for d in held) == sorted(mounts) and all(
                d["state"] == "allocated" for d in held), held
            held_ips = network_admin.request("GET", "/allocations", params={"owner": member_id})
            assert [h["address"] for h in held_ips] == [ip]
        stopped_usage = owner.quota().usage
        assert stopped_usage.cpus == pytest.approx(usage.cpus - 0.2) and stopped_usage.mem_mb == usage.mem_mb - 192
        assert stopped_usage.floating_ips == usage.floating_ips and stopped_usage.disks == usage.disks
        assert owner.stop(cluster).state == "STOPPED", "a repeat changes nothing"

        retrying(lambda: owner.start(cluster))
        started = settled(owner, cluster, ("RUNNING", "FAILED"), timeout=600)
        assert started["state"] == "RUNNING", (started["reason_code"], started["reason"])
        after = {m["member_id"]: (m["ip"], [d["mount_point"] for d in m["disks"]]) for m in started["members"]}
        assert after == before, "the same floating IPs and disks"
        for member_id, mark in marks.items():
            assert served(after[member_id][0], "kept.txt") == mark
        assert all(m["replacements"] == 0 for m in started["members"])
        events = [(e.step, e.state) for e in owner.events(cluster)]
        assert ("cluster", "STOPPED") in events and ("cluster", "STARTING") in events
        assert owner.start(cluster).state == "RUNNING", "a repeat changes nothing"
    finally:
        destroyed(owner, cluster)
    with pytest.raises(SpindleError) as refused:
        owner.stop(cluster)
    assert (refused.value.status, refused.value.code) == (409, "CLUSTER_NOT_RUNNING")


def test_keep_disks_makes_a_dataset_a_later_launch_attaches(database_url, owner, disk_admin):
    name = f"ds-{uuid.uuid4().hex[:8]}"
    first = launched(owner, ONE)
    [member] = first["members"]
    write(owner, first, "server-1", "data.txt", "from-the-first-cluster")
    disk_usage = owner.quota().usage.disks["hdd"]
    destroyed(owner, first, keep_disks=True, dataset=name)

    [dataset] = [d for d in owner.datasets(owner.username) if d.name == name]
    assert (dataset.state, dataset.product, dataset.disks, dataset.source_cluster) == ("KEPT", "static-web",
                                                                                         {"hdd": 1}, first["id"])
    kept = [d["id"] for d in disk_admin.disks(owner=f"dataset-{dataset.id}-server-1")]
    assert kept == [member["disks"][0]["id"]], "disk-service holds the member's disk for the dataset"
    assert owner.quota().usage.disks["hdd"] == disk_usage, "the kept disk still counts"
    with live_user(database_url, "stranger") as stranger:
        with pytest.raises(SpindleError) as hidden:
            stranger.datasets(owner.username)
        assert hidden.value.status == 404
        with pytest.raises(SpindleError) as unknown:
            stranger.launch("static-web", "1.0", {**ONE, "dataset": name})
        assert (unknown.value.status, unknown.value.code) == (404, "DATASET_NOT_FOUND")
    with pytest.raises(SpindleError) as mismatch:
        owner.launch("static-web", "1.0", {**ONE, "roles": {"server": {"count": 1, "disks": {"hdd": 2}}},
                                            "dataset": name})
    assert (mismatch.value.status, mismatch.value.code) == (422, "DATASET_MISMATCH")

    second = launched(owner, {**ONE, "dataset": name})
    [member2] = second["members"]
    assert [d["id"] for d in member2["disks"]] == kept and member2["node"] == member["node"]
    assert served(member2["ip"], "data.txt") == "from-the-first-cluster"
    assert [d.state for d in owner.datasets(owner.username) if d.name == name] == ["ATTACHED"]
    with pytest.raises(SpindleError) as in_use:
        owner.launch("static-web", "1.0", {**ONE, "dataset": name})
    assert in_use.value.code == "DATASET_IN_USE"

    destroyed(owner, second)  # not kept this time: wiped with the cluster
    [ended] = [d for d in owner.datasets(owner.username, include_ended=True) if d.id == dataset.id]
    assert ended.state == "RELEASED"
    deadline = time.monotonic() + 120
    while disk_admin.disks(owner=member2["member_id"]) and time.monotonic() < deadline:
        time.sleep(1)
    assert not disk_admin.disks(owner=member2["member_id"]), "the disk is released (and wiped)"


def test_a_dataset_nobody_attaches_is_reclaimed(owner, disk_admin):
    name = f"ds-{uuid.uuid4().hex[:8]}"
    cluster = launched(owner, ONE)
    destroyed(owner, cluster, keep_disks=True, dataset=name)
    [dataset] = [d for d in owner.datasets(owner.username) if d.name == name]
    with pytest.raises(SpindleError) as taken:
        other = launched(owner, ONE)
        try:
            owner.delete(other, keep_disks=True, dataset=name)
        finally:
            retrying(lambda: owner.delete(other))
    assert taken.value.code == "DATASET_EXISTS"
    reclaimed = owner.reclaim_dataset(owner.username, name)
    assert reclaimed.state == "RECLAIMED"
    assert name not in [d.name for d in owner.datasets(owner.username)]
    deadline = time.monotonic() + 120
    while disk_admin.disks(owner=f"dataset-{dataset.id}-server-1") and time.monotonic() < deadline:
        time.sleep(1)
    assert not disk_admin.disks(owner=f"dataset-{dataset.id}-server-1")
