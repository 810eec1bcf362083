"""Hadoop with YARN through the public REST API on the real stack: a user launches 1 NameNode + 2 (or
SPINDLE_E2E_HADOOP_DATANODES) DataNodes × 2 hdd disks (each also running a NodeManager) + 1
ResourceManager → RUNNING; a job (a
shell script run by the product's driver with the cluster's configuration) runs TeraGen → TeraSort →
TeraValidate from Hadoop's examples jar as MapReduce on YARN; TeraValidate's report holds its
checksum and no error, the job's output tarball carries it, and block files (``blk_*``) lie on every
disk of every DataNode (listed), next to the NodeManager's local dirs. The ResourceManager's container
is killed while TeraSort runs: its replacement recovers the application from its state in HDFS and the
job finishes. Then a DataNode's container is
killed: Spindle replaces it with the same IP on fresh disks, the NameNode re-replicates what it held
(the fresh disks fill with replicas, under-replicated blocks go back to 0) and ``fsck /`` reports
HEALTHY with no missing block; DELETE → DESTROYED with nothing left."""
import io
import os
import re
import tarfile
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.integration.platform.cluster_checks import assert_nothing_left, process_uids, racks_of
from tests.integration.platform.test_hadoop_e2e import (
    HDFS_USER,
    block_files,
    container_of,
    live_datanodes,
    topology,
)
from tests.support.jobs import wait_job
from tests.support.live_users import live_user
from tests.support.through_restarts import replaced, retrying, settled

ROWS = 500_000  # TeraGen rows of 100 bytes: 50 MB
BLOCK_MB = 8
# On a 2-core host (4 cpus offered by make test's platform, each member's executor holding 0.05 more):
# the NameNode and the ResourceManager at 0.25 CPU, the DataNodes at 1 CPU together (each one's
# DataNode, NodeManager and MapReduce tasks share its quota; at 0.25 each the JVMs' start-up made the
# test 490 s long, at 0.5 each 275 s), 1.9 with the job's driver. (The ResourceManager at 0.5, for its
# start again in the middle of TeraSort: the test took as long, 417 s against 411, and the other
# worker's engine cluster, 1.9 cpus, waited for the 0.25 more: 188 s against 13 in CI run 20.)
# A DataNode member keeps 1024 MB for its two daemons and gives the rest (1024 MB: two 512 MB containers)
# to its NodeManager. DATANODES × 2 hdd + the NameNode's disk: 3 DataNodes need 7 dedicated disks, and
# the development host has 6 (4 hdd, 2 ssd), so 2 DataNodes × 2 hdd here. The 3 DataNodes × 2
# disks: `SPINDLE_DEV_DISKS=4:hdd,2:ssd,4:hdd ./deploy/up`, then SPINDLE_E2E_HADOOP_DATANODES=3 (passed
# 2026-11-26 in 670 s, at 0.25 CPU each).
DATANODES = int(os.environ.get("SPINDLE_E2E_HADOOP_DATANODES", "2"))
DATANODE_CPUS = round(1.0 / DATANODES, 2)
LAUNCH = {
    "roles": {"namenode": {"cpus": 0.25, "mem_mb": 768, "disks": {"hdd": 0, "ssd": 1}},
              "datanode": {"count": DATANODES, "cpus": DATANODE_CPUS, "mem_mb": 2048, "disks": {"hdd": 2}},
              "resourcemanager": {"count": 1, "cpus": 0.25, "mem_mb": 1024}},
    "settings": {"replication": 2, "block_size_mb": BLOCK_MB, "container_mb": 512},
    "wait_for_resources": True,
}
TERASORT = """\
set -euo pipefail
rows="$1"
examples=/opt/hadoop/lib/hadoop-mapreduce-examples-3.3.6.jar
hadoop jar "$examples" teragen -Dmapreduce.job.maps=3 "$rows" /tera/in
hadoop jar "$examples" terasort -Dmapreduce.job.reduces=3 -Dmapreduce.terasort.output.replication=2 /tera/in /tera/out
hdfs dfs -setrep 2 /tera/out/_partition.lst  # TeraSort writes its partition file with 10 replicas
hadoop jar "$examples" teravalidate /tera/out /tera/report
hdfs dfs -cat '/tera/report/part-r-*' > /job/output/teravalidate.txt
hdfs dfs -ls -R /tera > /job/output/listing.txt
echo "TERAVALIDATE $(tr '\\t\\n' ' ;' < /job/output/teravalidate.txt)"
"""


@pytest.fixture
def user(database_url):
    with live_user(database_url, "yarn") as client:
        yield client


def namenode_bean(namenode: dict, name: str) -> dict:
    response = httpx.get(f"http://{namenode['ip']}:9870/jmx", params={"qry": f"Hadoop:service=NameNode,name={name}"},
                         timeout=10)
    response.raise_for_status()
    return response.json()["beans"][0]


def rm_get(resourcemanager: dict, path: str) -> dict:
    """The ResourceManager's REST answer at ``/ws/v1/cluster/<path>``."""
    response = httpx.get(f"http://{resourcemanager['ip']}:8088/ws/v1/cluster/{path}", timeout=10)
    response.raise_for_status()
    return response.json()


def running_app(resourcemanager: dict, name: str, timeout: float = 600) -> dict:
    """The YARN application called ``name`` once it is RUNNING with some of its work done."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            apps = (rm_get(resourcemanager, "apps")["apps"] or {}).get("app", [])
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            apps = [{"error": str(exc)}]
        found = [a for a in apps if a.get("name") == name and a.get("state") == "RUNNING" and a["progress"] > 0]
        if found:
            return found[0]
        assert time.monotonic() < deadline, apps
        time.sleep(1)


def fsck(namenode: dict, *options: str) -> str:
    """``hdfs fsck / [-files -blocks …]``'s report, from the NameNode's own fsck servlet (what the fsck
    tool reads)."""
    response = httpx.get(f"http://{namenode['ip']}:9870/fsck",
                         params={"ugi": HDFS_USER, "path": "/", **{option: "1" for option in options}}, timeout=120)
    assert response.status_code == 200, response.text[:500]
    return response.text


def fsck_count(report: str, label: str) -> int:
    found = re.search(rf"^\s*{re.escape(label)}:\s+(\d+)", report, re.MULTILINE)
    assert found, (label, report[-2000:])
    return int(found.group(1))


def blocks_by_disk(datanodes: list[dict]) -> dict[str, dict[int, list[str]]]:
    """Each DataNode's block files (by its IP) on each of its two disks."""
    return {d["ip"]: {disk: block_files(container_of(d), disk) for disk in (1, 2)} for d in datanodes}


def replicas(by_disk: dict[str, dict[int, list[str]]]) -> int:
    return sum(len(files) for disks in by_disk.values() for files in disks.values())


def replica_counts(by_disk: dict[str, dict[int, list[str]]]) -> Counter[str]:
    """How many DataNodes hold a finalized replica of each block id (``blk_<id>``)."""
    return Counter(block for disks in by_disk.values()
                   for block in {f.rsplit("/", 1)[-1] for files in disks.values() for f in files})


def settled_replicas(namenode: dict, datanodes: list[dict], timeout: float = 600) -> tuple[dict, dict, int]:
    """Once every block of the namespace has its 2 replicas, on two DataNodes' disks, and no more (the
    NameNode's counts, its fsck's list of blocks, and the block files on the disks: deleted files'
    replicas go on heartbeats): the NameNode's FSNamesystem bean, the block files by disk, and the most
    under-replicated blocks seen meanwhile. A finalized replica the NameNode does not know (a block of a
    write it never recorded, dropped at the DataNode's next full block report, hours later) is printed,
    not counted: it is no block of any file."""
    most_under, deadline = 0, time.monotonic() + timeout
    while True:
        state = namenode_bean(namenode, "FSNamesystem")
        most_under = max(most_under, state["UnderReplicatedBlocks"])
        by_disk = blocks_by_disk(datanodes)
        counts = replica_counts(by_disk)
        known: set[str] = set()
        if (state["UnderReplicatedBlocks"], state["MissingBlocks"], state["PendingDeletionBlocks"]) == (0, 0, 0):
            known = {f"blk_{block}" for block in re.findall(r"\bblk_(\d+)_\d+", fsck(namenode, "files", "blocks"))}
            if len(known) == state["BlocksTotal"] and all(counts[block] == 2 for block in known):
                orphans = {block: n for block, n in counts.items() if block not in known}
                if orphans:
                    print("finalized replicas of no block in the namespace:", orphans)
                return state, by_disk, most_under
        assert time.monotonic() < deadline, (state["UnderReplicatedBlocks"], state["MissingBlocks"],
                                             state["PendingDeletionBlocks"], state["BlocksTotal"], replicas(by_disk),
                                             {block: counts[block] for block in known if counts[block] != 2})
        time.sleep(2)


@pytest.mark.timeout(3600)  # may queue for cpus and every hdd behind other tests; MapReduce on small members
def test_terasort_on_yarn_and_a_lost_datanode_re_replicated(user, platform_env, tmp_path: Path):
    cluster = retrying(lambda: user.launch("hadoop", "3.3", LAUNCH))
    try:
        cluster = settled(user, cluster, ("RUNNING", "FAILED"), timeout=1800)  # it may queue behind other tests
        assert cluster["state"] == "RUNNING", (cluster["reason_code"], cluster["reason"])
        namenode = next(m for m in cluster["members"] if m["role"] == "namenode")
        datanodes = sorted((m for m in cluster["members"] if m["role"] == "datanode"), key=lambda m: m["member_id"])
        [resourcemanager] = [m for m in cluster["members"] if m["role"] == "resourcemanager"]
        assert len(datanodes) == DATANODES
        assert all([d["disk_class"] for d in m["disks"]] == ["hdd", "hdd"] for m in datanodes)
        live_datanodes(namenode, expected=DATANODES)
        # Every DataNode member runs a NodeManager too; all three registered with the ResourceManager.
        deadline = time.monotonic() + 300
        while True:
            try:
                nodes = httpx.get(f"http://{resourcemanager['ip']}:8088/ws/v1/cluster/nodes", timeout=10).json()
                running = {n["nodeHostName"]: n["rack"] for n in (nodes["nodes"] or {}).get("node", [])
                           if n["state"] == "RUNNING"}
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                running = {"error": str(exc)}
            if running.keys() == {d["ip"] for d in datanodes}:
                break
            assert time.monotonic() < deadline, f"NodeManagers registered: {running}"
            time.sleep(2)
        # Rack awareness, in the ResourceManager as in the NameNode: each in its node's failure domain.
        racks = racks_of(datanodes)
        assert running == {d["ip"]: f"/{racks[d['member_id']]}" for d in datanodes}
        assert topology(namenode) == running
        for datanode in datanodes:
            container = container_of(datanode)
            assert process_uids(container) == {"65534"}
            assert container.attrs["HostConfig"]["ReadonlyRootfs"] is True

        main = tmp_path / "terasort.sh"
        main.write_text(TERASORT)
        job = retrying(lambda: user.submit(cluster, main, args=[str(ROWS)]))
        # The ResourceManager dies while TeraSort runs: Spindle replaces it (same IP); it recovers its
        # state from HDFS, the MapReduce job's ApplicationMaster registers with it again, and the job
        # goes on to its end. (A ResourceManager without recovery knows no application and the job fails.)
        terasort = running_app(resourcemanager, "TeraSort")
        old = container_of(resourcemanager)
        old.kill()
        cluster, member = replaced(user, cluster, resourcemanager["member_id"], timeout=600)
        assert member["ip"] == resourcemanager["ip"] and container_of(member).id != old.id
        job = wait_job(user, cluster, job, timeout=1200, every=2)
        app = rm_get(resourcemanager, f"apps/{terasort['id']}")["app"]
        assert (app["name"], app["state"], app["finalStatus"]) == ("TeraSort", "FINISHED", "SUCCEEDED"), app
        with tarfile.open(fileobj=io.BytesIO(user.job_output(cluster, job["id"]))) as tar:
            report = next(tar.extractfile(m).read().decode() for m in tar.getmembers()  # type: ignore[union-attr]
                          if m.name.endswith("teravalidate.txt"))
        print("TeraValidate:", report.strip())
        # TeraValidate writes only its checksum when the output is sorted; errors ("misorder", …) else.
        assert re.fullmatch(r"checksum\t[0-9a-f]+\n", report), report
        assert "TERAVALIDATE checksum" in job["stdout"], job["stdout"][-2000:]

        # The blocks (TeraGen's input, TeraSort's output, all with 2 replicas) lie on every disk of every
        # DataNode, and the NodeManagers used their local dirs on the disks.
        state, before, _ = settled_replicas(namenode, datanodes)
        blocks = state["BlocksTotal"]
        for ip, disks in before.items():
            print(f"DataNode {ip}:", {f"/data/{disk}": len(files) for disk, files in disks.items()}, "block files")
            for disk, files in disks.items():
                print(f"  /data/{disk}:", " ".join(sorted(f.rsplit("/", 1)[-1] for f in files)))
            assert all(disks.values()), (ip, disks)
        for datanode in datanodes:
            listing = container_of(datanode).exec_run(["ls", "/data/1/yarn", "/data/2/yarn"]).output.decode()
            assert listing.count("local") == 2 and listing.count("logs") == 2, listing
        report = fsck(namenode)
        assert "is HEALTHY" in report and fsck_count(report, "Total blocks (validated)") == blocks, report[-2000:]
        print(f"fsck before: {blocks} blocks, {replicas(before)} replicas, under-replicated "
              f"{fsck_count(report, 'Under-replicated blocks')}, missing {fsck_count(report, 'Missing blocks')}")

        # A DataNode member dies: Spindle replaces it (same IP, fresh disks); the NameNode copies the
        # replicas it held again, onto the others and the fresh disks.
        victim = datanodes[0]
        lost = sum(len(files) for files in before[victim["ip"]].values())
        old = container_of(victim)
        old.kill()
        cluster, member = replaced(user, cluster, victim["member_id"], timeout=600)
        assert member["ip"] == victim["ip"] and container_of(member).id != old.id
        live_datanodes(namenode, expected=DATANODES, fresh=victim["ip"])
        state, after, most_under = settled_replicas(namenode, [member, *datanodes[1:]])
        report = fsck(namenode)
        fresh = sum(len(files) for files in after[victim["ip"]].values())
        print(f"lost with {victim['ip']}: {lost} replicas; under-replicated blocks seen at most {most_under}, now "
              f"{fsck_count(report, 'Under-replicated blocks')}; {replicas(after)} replicas of {blocks} blocks, "
              f"{fresh} on the fresh DataNode")
        assert "The filesystem under path '/' is HEALTHY" in report, report[-2000:]
        assert fsck_count(report, "Missing blocks") == 0
        assert fsck_count(report, "Under-replicated blocks") == 0
        assert fsck_count(report, "Total blocks (validated)") == state["BlocksTotal"] == blocks
        assert fresh > 0, "the fresh DataNode holds re-replicated blocks"
    finally:
        retrying(lambda: user.delete(cluster))
        final = settled(user, cluster, ("DESTROYED",), timeout=300)
    assert final["state"] == "DESTROYED"
    assert_nothing_left(platform_env, final)
