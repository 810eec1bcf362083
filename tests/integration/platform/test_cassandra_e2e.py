"""Cassandra through the public REST API on the real stack: a user launches 3 nodes → RUNNING, every
node UN in the others' view, in its Spindle node's rack; only the cluster's user (spindle, with the
cluster's secret) logs in; from the host (Python cassandra-driver) a keyspace with replication
factor 3 takes N rows written at QUORUM; after `nodetool flush` each node's SSTables lie on every one
of its hdd disks (and its commit log on its ssd, when the host has ssd disks for 3 nodes); DELETE →
DESTROYED with nothing left. A node's loss and its replacement (same IP, fresh disks, its
predecessor's place in the ring, every row at ALL again), and the resize from 3 nodes to 2 (issue 26's
drains: refused by Cassandra while a keyspace needs 3 replicas, then done with `nodetool decommission`
first while a writer goes on, losing no row) are tested across nodes, where a whole node dies:
tests/integration/nodes/test_products_on_nodes.py (here they would cost minutes of CPU of the
parallel pass's critical path)."""

import pytest
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.concurrent import execute_concurrent_with_args

from spindle_common.clients import DiskClient
from tests.integration.platform.cluster_checks import (
    assert_jvm_has_platform_options,
    assert_nothing_left,
    container_of,
    process_uids,
    racks_of,
)
from tests.support.cassandra_records import connected, wait_up_normal
from tests.support.live_users import cluster_secret, live_user
from tests.support.through_restarts import retrying, settled

ROWS = 1000
NODES = 3
KEYSPACE = "spindle_e2e"


@pytest.fixture
def user(database_url):
    with live_user(database_url, "cass") as client:
        yield client


def disks_per_node(platform_env: dict) -> tuple[int, int]:
    """(hdd, ssd) disks each of 3 nodes can have on this platform's disks (every disk not failed or
    retired counts: the launch waits for busy ones): 2 hdd when the nodes' disks allow it, else 1; an
    ssd for the commit log only if 3 nodes can each have one besides their hdd disks."""
    with DiskClient("http://127.0.0.1:8083", platform_env["SPINDLE_INTERNAL_TOKEN"], actor="test",
                    role="admin") as client:
        disks = [d for d in client.disks() if d["state"] not in ("failed", "retired")]
    hosts: dict[str, dict[str, int]] = {}
    for disk in disks:
        counts = hosts.setdefault(disk["node"], {"hdd": 0, "ssd": 0})
        counts[disk["disk_class"]] = counts.get(disk["disk_class"], 0) + 1

    def members_fit(hdd: int, ssd: int) -> int:
        return sum(min(c["hdd"] // hdd, c["ssd"] // ssd if ssd else NODES) for c in hosts.values())

    for hdd, ssd in ((2, 1), (2, 0), (1, 1), (1, 0)):
        if members_fit(hdd, ssd) >= NODES:
            return hdd, ssd
    pytest.fail(f"this platform's disks cannot hold {NODES} Cassandra nodes: {hosts}")


def run(container, *command: str) -> str:
    out = container.exec_run(list(command))
    assert out.exit_code == 0, (command, out.output.decode(errors="replace")[-2000:])
    return out.output.decode()


def rack_by_ip(member: dict) -> dict[str, str]:
    """Every node's rack as ``member`` sees it (`nodetool status`: the address second, the rack last)."""
    status = run(container_of(member), "nodetool", "status")
    assert "Datacenter: datacenter1" in status, status
    return {line.split()[1]: line.split()[-1] for line in status.splitlines() if line[:2] in ("UN", "DN", "UJ")}


def data_files(container, directory: str) -> list[str]:
    """The SSTable data files of the test's table under ``directory``."""
    return run(container, "find", directory, "-path", f"*/{KEYSPACE}/kv-*", "-name", "*-Data.db").split()


def test_three_nodes_rf3_hold_every_row_on_every_disk(user, platform_env, database_url):
    hdd, ssd = disks_per_node(platform_env)
    # 3 × (0.6 + the executor's 0.05) of the 2 cpus a 2-core host offers: at 0.25 each node's JVM took
    # minutes to start and to stream its replicas back.
    launch = {"roles": {"node": {"count": NODES, "cpus": 0.6, "mem_mb": 1024, "disks": {"hdd": hdd, "ssd": ssd}}},
              "wait_for_resources": True}
    cluster = retrying(lambda: user.launch("cassandra", "5.0", launch))
    try:
        cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=1200)
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        nodes = sorted(cluster["members"], key=lambda m: m["member_id"])
        assert [m["member_id"] for m in nodes] == [f"{cluster['id']}-node-{i}" for i in range(1, NODES + 1)]
        hdd_dirs = [f"/data/{i}" for i in range(1, hdd + 1)]
        commitlog = f"/data/{hdd + 1}/commitlog" if ssd else "/data/1/commitlog"
        for member in nodes:
            assert [d["disk_class"] for d in member["disks"]] == ["hdd"] * hdd + ["ssd"] * ssd
            container = container_of(member)
            assert process_uids(container) == {"65534"}
            assert container.attrs["HostConfig"]["ReadonlyRootfs"] is True
            yaml = run(container, "cat", "/etc/cassandra/cassandra.yaml")
            assert "data_file_directories:\n" + "".join(f"  - {d}/data\n" for d in hdd_dirs) in yaml
            assert f"commitlog_directory: {commitlog}\n" in yaml
            assert f'- seeds: "{",".join(n["ip"] + ":7000" for n in nodes)}"' in yaml
            assert_jvm_has_platform_options(container)
        wait_up_normal(nodes, container_of)
        # Each node's rack (GossipingPropertyFileSnitch) is the one Spindle gave it (its node's failure
        # domain); one data centre, named as SimpleSnitch names it (the keyspace below uses it).
        racks = racks_of(nodes)
        assert rack_by_ip(nodes[0]) == {m["ip"]: racks[m["member_id"]] for m in nodes}

        # Every client logs in as the cluster's user with its secret: not without a login, not with a
        # wrong password, not as the default superuser (dropped once user spindle was made).
        secret = cluster_secret(database_url, cluster["id"])
        for login in (None, ("spindle", "0" * 64), ("cassandra", "cassandra")):
            refused = Cluster([n["ip"] for n in nodes], protocol_version=5, connect_timeout=10,
                              auth_provider=PlainTextAuthProvider(*login) if login else None)
            try:
                with pytest.raises(NoHostAvailable):
                    refused.connect()
            finally:
                refused.shutdown()

        with connected(nodes, secret) as session:
            session.execute(f"CREATE KEYSPACE {KEYSPACE} WITH replication = "
                            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
            session.execute(f"CREATE TABLE {KEYSPACE}.kv (k int PRIMARY KEY, v text)")
            insert = session.prepare(f"INSERT INTO {KEYSPACE}.kv (k, v) VALUES (?, ?)")
            results = execute_concurrent_with_args(session, insert, [(k, f"value-{k}") for k in range(ROWS)],
                                                   concurrency=16, raise_on_first_error=False)
            assert all(ok for ok, _ in results), [r for ok, r in results if not ok][:3]

        # RF 3 on 3 nodes: every node holds every row; flushed, its SSTables are on each of its hdd disks.
        for member in nodes:
            container = container_of(member)
            run(container, "nodetool", "flush", KEYSPACE)
            per_disk = {d: data_files(container, d) for d in hdd_dirs}
            assert all(per_disk.values()), (member["member_id"], per_disk)
            if ssd:  # the ssd holds the commit log and no table data
                assert run(container, "ls", commitlog).split(), (member["member_id"], "no commit log segment")
                assert data_files(container, f"/data/{hdd + 1}") == []

    finally:
        retrying(lambda: user.delete(cluster))
        final = settled(user, cluster, ("DESTROYED",), timeout=300)
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)
