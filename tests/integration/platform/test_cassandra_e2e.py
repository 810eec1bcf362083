"""Cassandra through the public REST API on the real stack: a user launches 3 nodes → RUNNING, every
node UN in the others' view, in its Spindle node's rack; only the cluster's user (spindle, with the
cluster's secret) logs in; from the host (Python cassandra-driver) a keyspace with replication
factor 3 takes N rows written at QUORUM; after `nodetool flush` each node's SSTables lie on every one
of its hdd disks (and its commit log on its ssd, when the host has ssd disks for 3 nodes). A resize
from 3 nodes to 2 (issue 26's drains): refused by Cassandra while a keyspace needs 3 replicas, then
done with `nodetool decommission` first while a writer goes on, losing no row; DELETE → DESTROYED
with nothing left. A node's loss and its replacement (same IP, fresh disks, its predecessor's place
in the ring, every row at ALL again) are tested where a whole node dies:
tests/integration/nodes/test_products_on_nodes.py (here they cost a fourth Cassandra start, minutes
of CPU of the parallel pass's critical path)."""
import time

import pytest
from cassandra import ConsistencyLevel
from cassandra.auth import PlainTextAuthProvider
from cassandra.cluster import Cluster, NoHostAvailable
from cassandra.concurrent import execute_concurrent_with_args

from spindle_common.clients import DiskClient
from tests.integration.platform.cluster_checks import (
    assert_jvm_has_platform_options,
    assert_nothing_left,
    container_of,
    racks_of,
)
from tests.support.cassandra_records import Writer, connected, not_read_back
from tests.support.live_users import cluster_secret, live_user
from tests.support.through_restarts import refusals, resized_without, retrying, settled

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


def up_normal(member: dict) -> set[str]:
    """The nodes ``member`` sees Up and Normal (`nodetool status`)."""
    out = container_of(member).exec_run(["nodetool", "status"])
    if out.exit_code != 0:
        return set()
    return {line.split()[1] for line in out.output.decode().splitlines() if line.startswith("UN ")}


def rack_by_ip(member: dict) -> dict[str, str]:
    """Every node's rack as ``member`` sees it (`nodetool status`: the address second, the rack last)."""
    status = run(container_of(member), "nodetool", "status")
    assert "Datacenter: datacenter1" in status, status
    return {line.split()[1]: line.split()[-1] for line in status.splitlines() if line[:2] in ("UN", "DN", "UJ")}


def wait_up_normal(members: list[dict], timeout: float = 300) -> None:
    ips = {m["ip"] for m in members}
    deadline = time.monotonic() + timeout
    while not all(up_normal(m) == ips for m in members):
        assert time.monotonic() < deadline, {m["member_id"]: up_normal(m) for m in members}
        time.sleep(2)


def data_files(container, directory: str) -> list[str]:
    """The SSTable data files of the test's table under ``directory``."""
    return run(container, "find", directory, "-path", f"*/{KEYSPACE}/kv-*", "-name", "*-Data.db").split()


def test_three_nodes_rf3_hold_every_row_on_every_disk_and_a_resize_down_decommissions_first(user, platform_env,
                                                                                               database_url):
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
            assert run(container, "id", "-u").strip() == "65534"
            assert container.attrs["HostConfig"]["ReadonlyRootfs"] is True
            yaml = run(container, "cat", "/etc/cassandra/cassandra.yaml")
            assert "data_file_directories:\n" + "".join(f"  - {d}/data\n" for d in hdd_dirs) in yaml
            assert f"commitlog_directory: {commitlog}\n" in yaml
            assert f'- seeds: "{",".join(n["ip"] + ":7000" for n in nodes)}"' in yaml
            assert_jvm_has_platform_options(container)
        wait_up_normal(nodes)
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

        cluster = resize_to_two(user, cluster, nodes, secret)
    finally:
        retrying(lambda: user.delete(cluster))
        final = settled(user, cluster, ("DESTROYED",), timeout=300)
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)


def node_count(user, cluster: dict) -> int:
    return retrying(lambda: user.cluster(cluster))["options"]["roles"]["node"]["count"]


def resize_to_two(user, cluster: dict, nodes: list[dict], secret: str) -> dict:
    """3 nodes resized to 2 (issue 26's drains): with a keyspace of replication factor 3 Cassandra
    refuses to decommission (2 nodes cannot hold 3 replicas), so the node stays and the timeline says
    why; with factor 2 the leaving node runs `nodetool decommission` (DRAINING → DRAINED: its replicas
    streamed to the others) before Spindle removes it, while a writer goes on at QUORUM: every
    acknowledged row reads back at ALL from the 2 nodes left. The cluster once resized."""
    leaving, staying = nodes[-1], nodes[:-1]
    # Refused: 2 nodes cannot keep 3 replicas. The node stays, the count goes back to 3.
    seen = user.events(cluster)[-1].seq
    retrying(lambda: user.resize(cluster, {"node": 2}))
    refused = refusals(user, cluster, seen, timeout=600)
    assert refused[0].member_id == leaving["member_id"], refused
    assert "DRAIN_FAILED" in refused[0].message and "Not enough live nodes" in refused[0].message, refused
    cluster = settled(user, cluster, ("RUNNING",), timeout=300)
    assert node_count(user, cluster) == NODES
    assert sorted(m["member_id"] for m in cluster["members"]) == [m["member_id"] for m in nodes]
    wait_up_normal(nodes)

    # Factor 2 (system_distributed's too, 3 by default, and system_auth's, which Spindle makes 3): 2
    # nodes can hold it; the node is decommissioned, then removed, while rows go on being written.
    seen = user.events(cluster)[-1].seq
    with connected(nodes, secret) as session:
        for keyspace in (KEYSPACE, "system_distributed", "system_auth"):
            session.execute(f"ALTER KEYSPACE {keyspace} WITH replication = "
                            "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
        writer = Writer(session, KEYSPACE, first=ROWS)
        writer.start()
        try:
            retrying(lambda: user.resize(cluster, {"node": 2}))
            cluster = resized_without(user, cluster, leaving["member_id"], seen, timeout=900)
            time.sleep(2)  # a few writes more with the node gone
        finally:
            acked = writer.stop()
    steps = [e for e in user.events(cluster, seen) if e.member_id == leaving["member_id"]]
    states = [e.state for e in steps]
    assert states.index("DRAINING") < states.index("DRAINED") < states.index("REMOVING") < \
        states.index("REMOVED"), states
    assert "decommissioned" in next(e.message for e in steps if e.state == "DRAINED")
    assert node_count(user, cluster) == 2
    assert acked and len(acked) > 50, (len(acked), writer.failed)
    wait_up_normal(staying)  # the ring is the 2 nodes left: the leaving one is gone from it
    with connected(staying, secret) as session:
        keys = list(range(ROWS)) + acked
        lost = not_read_back(session, KEYSPACE, keys, ConsistencyLevel.ALL)
        assert lost == [], f"{len(lost)} of {len(keys)} acknowledged rows not read back at ALL: {lost[:10]}"
    return cluster
