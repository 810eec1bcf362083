"""The hadoop 3.3 manifest (HDFS, optional YARN, jobs): launch options → each member's rendered
hdfs-site.xml, core-site.xml, yarn-site.xml, mapred-site.xml, command and env — every dedicated disk of
a DataNode in dfs.datanode.data.dir (and, with YARN, in the NodeManager's local and log dirs), the
NameNode's metadata on its one disk, replication capped by the DataNodes there are, daemons bound on
the member's IP; a job driver's configuration (carried in its env) is the cluster's."""
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from spindle_common.catalog import load_manifest, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.job_runner import driver_command, driver_context
from spindle_orchestrator.render import (
    RenderError,
    cluster_principal_patterns,
    ip_principals,
    member_context,
    member_principals,
    plan_members,
    principals,
    render_member,
    render_value,
)

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
# Every client's writes go on with the DataNodes left when one in its pipeline dies and none can
# replace it (3 DataNodes, replication 3, one node lost).
BEST_EFFORT = "dfs.client.block.write.replace-datanode-on-failure.best-effort"


@pytest.fixture(scope="module")
def manifest():
    return load_manifest(REPO_CATALOG / "hadoop" / "3.3" / "manifest.json")


def rendered(manifest, options: dict) -> dict[str, dict]:
    """Each member's rendered container by name, the IPs 10.0.0.1, 10.0.0.2, … in plan order."""
    resolved = validate_options(manifest, options)
    planned = plan_members("c1", manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    return {m.name: render_member({"id": "c1"}, manifest, resolved, m, ips, planned) for m in planned}


def parse(xml: str) -> dict[str, str]:
    return {p.findtext("name"): p.findtext("value") for p in ET.fromstring(xml).iter("property")}


def properties(container: dict, name: str) -> dict[str, str]:
    return parse(container["files"][f"/etc/hadoop/{name}"])


def driver(manifest, options: dict) -> tuple[list[str], dict[str, str]]:
    """A job's rendered driver command (args ``a b``) and env, members at 10.0.0.1, … in plan order."""
    resolved = validate_options(manifest, options)
    planned = plan_members("c1", manifest, resolved)
    members = [SimpleNamespace(member_id=m.member_id, role=m.role, index=m.index, ip=f"10.0.0.{i}")
               for i, m in enumerate(planned, start=1)]
    cluster = SimpleNamespace(id="c1", owner="ann", product="hadoop", version="3.3", members=members,
                              options=resolved)
    context = driver_context(cluster, SimpleNamespace(id="j1", main="main.sh"), "10.0.0.99",  # type: ignore[arg-type]
                             manifest=manifest)
    return driver_command(manifest, context, ["a", "b"]), render_value(manifest["jobs"]["env"], context, "env")


@pytest.mark.parametrize(("options", "datanodes", "data_dirs", "replication", "block_size"), [
    ({}, 3, "/data/1/data,/data/2/data", "3", str(128 << 20)),
    ({"roles": {"datanode": {"count": 2, "disks": {"hdd": 2}}}, "settings": {"replication": 3, "block_size_mb": 1}},
     2, "/data/1/data,/data/2/data", "2", str(1 << 20)),
    ({"roles": {"datanode": {"count": 1, "disks": {"hdd": 1, "ssd": 3}}}, "settings": {"replication": 1}},
     1, "/data/1/data,/data/2/data,/data/3/data,/data/4/data", "1", str(128 << 20)),
    ({"roles": {"datanode": {"count": 4, "disks": {"hdd": 0}}}}, 4, "/tmp/hadoop/data", "3", str(128 << 20)),
])
def test_datanodes_use_every_disk_and_the_settings(manifest, options, datanodes, data_dirs, replication, block_size):
    members = rendered(manifest, options)
    assert list(members) == ["namenode-1", *[f"datanode-{i}" for i in range(1, datanodes + 1)]]
    for index in range(1, datanodes + 1):
        container = members[f"datanode-{index}"]
        ip = f"10.0.0.{index + 1}"
        hdfs = properties(container, "hdfs-site.xml")
        assert hdfs["dfs.datanode.data.dir"] == data_dirs
        assert (hdfs["dfs.replication"], hdfs["dfs.blocksize"]) == (replication, block_size)
        assert hdfs["dfs.datanode.hostname"] == ip and hdfs["dfs.webhdfs.enabled"] == "true"
        assert {hdfs[f"dfs.datanode.{k}"] for k in ("address", "ipc.address", "http.address")} == \
            {f"{ip}:9866", f"{ip}:9867", f"{ip}:9864"}
        assert properties(container, "core-site.xml")["fs.defaultFS"] == "hdfs://10.0.0.1:8020"
        assert container["command"] == ["sh", "-c", "exec hdfs datanode"]  # no YARN by default
        assert properties(container, "yarn-site.xml") == {}
    namenode = properties(members["namenode-1"], "hdfs-site.xml")
    assert (namenode["dfs.replication"], namenode["dfs.blocksize"]) == (replication, block_size)


def test_the_namenode_formats_its_metadata_disk_once_and_binds_its_ip(manifest):
    container = rendered(manifest, {"roles": {"namenode": {"mem_mb": 2048}}})["namenode-1"]
    hdfs = properties(container, "hdfs-site.xml")
    assert hdfs["dfs.namenode.name.dir"] == "/data/1/name"
    assert (hdfs["dfs.namenode.rpc-address"], hdfs["dfs.namenode.http-address"]) == ("10.0.0.1:8020", "10.0.0.1:9870")
    assert hdfs["dfs.namenode.datanode.registration.ip-hostname-check"] == "false"
    assert hdfs["dfs.webhdfs.enabled"] == "true"
    [script] = container["command"][2:]
    assert container["command"][:2] == ["sh", "-c"]
    assert re.fullmatch(r"\[ -d /data/1/name/current \] \|\| hdfs namenode -format -nonInteractive "
                        r"-clusterid 'CID-c1' \|\| exit 1; exec hdfs namenode", script)
    assert container["env"]["HADOOP_HEAPSIZE_MAX"] == "1536m"


@pytest.mark.parametrize(("disks", "classes"), [
    (None, {"hdd": 1}), ({"hdd": 1}, {"hdd": 1}), ({"hdd": 0, "ssd": 1}, {"ssd": 1}), ({"ssd": 1}, {"ssd": 1}),
])
def test_the_namenode_has_exactly_one_metadata_disk(manifest, disks, classes):
    resolved = validate_options(manifest, {"roles": {"namenode": {} if disks is None else {"disks": disks}}})
    [namenode] = [m for m in plan_members("c1", manifest, resolved) if m.role == "namenode"]
    assert namenode.disks == classes


@pytest.mark.parametrize("options", [
    {"roles": {"namenode": {"disks": {"hdd": 1, "ssd": 1}}}},  # two disks
    {"roles": {"namenode": {"disks": {"hdd": 0}}}},  # none
    {"roles": {"namenode": {"disks": {}}}},  # none: given, a disks object names every disk
    {"roles": {"namenode": {"count": 2}}},
    {"roles": {"datanode": {"count": 0}}},
    {"settings": {"block_size_mb": 0}},
    {"settings": {"replication": 0}},
    {"settings": {"dfs.permissions.enabled": False}},
])
def test_bad_options_are_refused(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS")


YARN = {"roles": {"resourcemanager": {"count": 1, "mem_mb": 2048},
                  "datanode": {"count": 2, "cpus": 1.5, "mem_mb": 3072, "disks": {"hdd": 1, "ssd": 2}}},
        "settings": {"container_mb": 640}}


def test_yarn_is_off_by_default_and_jobs_then_run_mapreduce_in_the_driver(manifest):
    members = rendered(manifest, {})
    assert not any(name.startswith("resourcemanager") for name in members)
    command, env = driver(manifest, {})
    assert command == ["hadoop-job", "/job/main.sh", "a", "b"]
    assert parse(env["SPINDLE_MAPRED_SITE"])["mapreduce.framework.name"] == "local"
    assert parse(env["SPINDLE_YARN_SITE"]) == {}
    assert parse(env["SPINDLE_CORE_SITE"])["fs.defaultFS"] == "hdfs://10.0.0.1:8020"
    assert parse(env["SPINDLE_HDFS_SITE"]) == {"dfs.replication": "3", "dfs.blocksize": str(128 << 20),
                                               BEST_EFFORT: "true"}
    assert (env["HADOOP_CONF_DIR"], env["HADOOP_USER_NAME"]) == ("/tmp/hadoop-conf", "hdfs")


def test_a_resourcemanager_turns_on_a_nodemanager_in_every_datanode_over_all_its_disks(manifest):
    members = rendered(manifest, YARN)
    assert list(members) == ["namenode-1", "datanode-1", "datanode-2", "resourcemanager-1"]
    rm = members["resourcemanager-1"]
    assert rm["command"] == ["yarn", "resourcemanager"] and rm["env"]["HADOOP_HEAPSIZE_MAX"] == "1536m"
    assert rm["security"] == {"user": "65534:65534", "read_only_root": True}
    rm_site = properties(rm, "yarn-site.xml")
    assert rm_site["yarn.resourcemanager.hostname"] == "10.0.0.4"
    assert rm_site["yarn.nodemanager.aux-services"] == "mapreduce_shuffle"
    # its state in HDFS (replicated, at the NameNode): a replacement anywhere recovers the applications
    assert rm_site["yarn.resourcemanager.recovery.enabled"] == "true"
    assert rm_site["yarn.resourcemanager.store.class"].endswith(".FileSystemRMStateStore")
    assert rm_site["yarn.resourcemanager.fs.state-store.uri"] == "hdfs://10.0.0.1:8020/system/yarn/rmstore"
    # written at the cluster's replication (HDFS's default 3 left them under-replicated on 2 DataNodes)
    assert properties(rm, "hdfs-site.xml") == {"dfs.replication": "2", "dfs.blocksize": str(128 * 1048576),
                                               BEST_EFFORT: "true"}
    for index, ip in ((1, "10.0.0.2"), (2, "10.0.0.3")):
        container = members[f"datanode-{index}"]
        [script] = container["command"][2:]
        # one supervisor runs both daemons and ends (the member with it) when either ends
        assert script == ("exec together 'HADOOP_HEAPSIZE_MAX=256m exec hdfs datanode' "
                          "'HADOOP_HEAPSIZE_MAX=256m exec yarn nodemanager'")
        nm = properties(container, "yarn-site.xml")
        assert {k: v for k, v in nm.items() if k in rm_site} == rm_site  # the RM's view, plus its own
        assert nm["yarn.nodemanager.local-dirs"] == "/data/1/yarn/local,/data/2/yarn/local,/data/3/yarn/local"
        assert nm["yarn.nodemanager.log-dirs"] == "/data/1/yarn/logs,/data/2/yarn/logs,/data/3/yarn/logs"
        assert (nm["yarn.nodemanager.resource.memory-mb"], nm["yarn.nodemanager.resource.cpu-vcores"]) == ("2048", "2")
        assert (nm["yarn.nodemanager.address"], nm["yarn.nodemanager.webapp.address"]) == (f"{ip}:8041", f"{ip}:8042")
        mapred = properties(container, "mapred-site.xml")
        assert mapred["mapreduce.framework.name"] == "yarn"
        assert (mapred["mapreduce.map.memory.mb"], mapred["yarn.app.mapreduce.am.resource.mb"]) == ("640", "640")
        assert mapred["mapreduce.map.java.opts"].startswith("-Xmx512m ")
        assert mapred["yarn.app.mapreduce.am.env"] == "HADOOP_MAPRED_HOME=/opt/hadoop"
    # the driver reads the same YARN and MapReduce configuration as the cluster
    _, env = driver(manifest, YARN)
    assert parse(env["SPINDLE_YARN_SITE"]) == rm_site
    assert parse(env["SPINDLE_MAPRED_SITE"]) == properties(members["datanode-1"], "mapred-site.xml")
    assert parse(env["SPINDLE_HDFS_SITE"])["dfs.replication"] == "2"


@pytest.mark.parametrize(("mem_mb", "cpus", "memory", "vcores"), [
    (1024, 0.25, "512", "1"), (2048, 0.5, "1024", "1"), (4096, 4, "3072", "4"),
])
def test_the_nodemanager_offers_the_member_less_the_daemons(manifest, mem_mb, cpus, memory, vcores):
    options = {"roles": {"resourcemanager": {"count": 1}, "datanode": {"count": 1, "mem_mb": mem_mb, "cpus": cpus}}}
    nm = properties(rendered(manifest, options)["datanode-1"], "yarn-site.xml")
    assert (nm["yarn.nodemanager.resource.memory-mb"], nm["yarn.nodemanager.resource.cpu-vcores"]) == (memory, vcores)


@pytest.mark.parametrize("options", [
    {"roles": {"resourcemanager": {"count": 2}}},
    {"roles": {"resourcemanager": {"disks": {"hdd": 1}}}},
    {"settings": {"container_mb": 128}},
    {"settings": {"yarn": True}},
])
def test_bad_yarn_options_are_refused(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS")


def test_datanodes_a_resize_removes_are_decommissioned_first(manifest):
    """Draining DataNodes: the NameNode's exclude file lists the leaving ones (refreshNodes reads it) and
    the removed ones whose IP no member holds again (the NameNode would take them back into service
    while it still counts them live), and the drain's check passes only once every one of them is in the
    decommissioned report."""
    resolved = validate_options(manifest, {})
    planned = plan_members("c1", manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    namenode = next(m for m in planned if m.role == "namenode")
    leaving = [m for m in planned if m.role == "datanode"][-2:]
    files = render_member({"id": "c1"}, manifest, resolved, namenode, ips, planned)["files"]
    assert files["/etc/hadoop/dfs.exclude"] == "", "nothing excluded while no member leaves"
    assert parse(files["/etc/hadoop/hdfs-site.xml"])["dfs.hosts.exclude"] == "/etc/hadoop/dfs.exclude"
    files = render_member({"id": "c1"}, manifest, resolved, namenode, ips, planned, leaving=leaving)["files"]
    assert files["/etc/hadoop/dfs.exclude"].split() == [ips[m.member_id] for m in leaving]
    assert manifest["roles"]["namenode"]["reload"] == ["hdfs", "dfsadmin", "-refreshNodes"]

    retired = [{"member_id": "c1-datanode-9", "role": "datanode", "ip": "10.0.0.99"},
               {"member_id": "c1-datanode-8", "role": "datanode", "ip": ips[leaving[0].member_id]}]
    files = render_member({"id": "c1"}, manifest, resolved, namenode, ips, planned, retired=retired)["files"]
    assert files["/etc/hadoop/dfs.exclude"].split() == ["10.0.0.99"], \
        "a removed DataNode stays excluded until a member holds its IP again"
    files = render_member({"id": "c1"}, manifest, resolved, namenode, ips, planned, leaving=leaving[1:],
                          retired=retired)["files"]
    assert files["/etc/hadoop/dfs.exclude"].split() == [ips[leaving[1].member_id], "10.0.0.99"]

    assert manifest["roles"]["datanode"]["drain"]["by"] == "namenode"
    site = parse(files["/etc/hadoop/hdfs-site.xml"])
    assert site["dfs.namenode.decommission.interval"] == "5s"
    # A DataNode silent for 2 × 15 s + 10 heartbeats (60 s) is dead, not 10.5 min: with fewer live
    # DataNodes than the replication, the NameNode puts a stale one in every write pipeline until then.
    assert site["dfs.namenode.heartbeat.recheck-interval"] == "15000"
    assert site["dfs.namenode.avoid.write.stale.datanode"] == "true"


# A real `hdfs dfsadmin -report` of Hadoop 3.3.6 (a Spindle NameNode's, during a drain; IPs replaced):
# 10.0.0.2 and 10.0.0.3 Normal, 10.0.0.4 Decommissioned.
REPORT = (Path(__file__).parent / "data" / "hdfs-dfsadmin-report.txt").read_text()
IN_PROGRESS = "Decommission Status : Decommission in progress"  # DatanodeInfo's words for that state


def status_of(report: str, ip: str, status: str) -> str:
    """The report with the DataNode at ``ip`` in ``status`` (its one status line replaced)."""
    head, block = report.split(f"Name: {ip}:", 1)
    line = next(x for x in block.splitlines() if x.startswith("Decommission Status : "))
    return head + f"Name: {ip}:" + block.replace(line, status, 1)


@pytest.mark.parametrize(("leaving", "report", "code", "said"), [
    (["10.0.0.4"], REPORT, 0, "every leaving DataNode is decommissioned by the NameNode"),
    (["10.0.0.4"], status_of(REPORT, "10.0.0.4", IN_PROGRESS), 1, "10.0.0.4: not decommissioned yet"),
    (["10.0.0.3", "10.0.0.4"], REPORT, 1, "10.0.0.3: not decommissioned yet"),
    # the status read is the one in the leaving DataNode's own block, not the next one's
    (["10.0.0.3"], REPORT, 1, "10.0.0.3: not decommissioned yet"),
    (["10.0.0.4"], status_of(status_of(REPORT, "10.0.0.4", "Decommission Status : Normal"), "10.0.0.3",
                             "Decommission Status : Decommissioned"), 1, "10.0.0.4: not decommissioned yet"),
    # an IP the report does not list (10.0.0.40 is not 10.0.0.4)
    (["10.0.0.4"], REPORT.replace("Name: 10.0.0.4:", "Name: 10.0.0.40:"), 1, "10.0.0.4: not decommissioned yet"),
    (["10.0.0.4"], None, 1, ""),  # the NameNode did not answer
], ids=["decommissioned", "in-progress", "one-of-two", "normal", "next-block", "absent", "no-answer"])
def test_the_drain_check_passes_only_once_the_namenode_reports_each_leaving_datanode_decommissioned(
        manifest, tmp_path, leaving, report, code, said):
    """The DataNodes' drain check, rendered for the leaving IPs and run by sh with an ``hdfs`` that
    prints the report (or fails): exit 0 only when every leaving DataNode's own block of the report
    says Decommissioned (a removal before that loses the replicas not copied yet, and the NameNode
    keeps sending readers to the DataNode that went)."""
    resolved = validate_options(manifest, {"roles": {"datanode": {"count": 3}}})
    planned = plan_members("c1", manifest, resolved)
    namenode = next(m for m in planned if m.role == "namenode")
    going = [m for m in planned if m.role == "datanode"][-len(leaving):]
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    ips.update({m.member_id: ip for m, ip in zip(going, leaving, strict=True)})
    context = member_context({"id": "c1"}, manifest, resolved, namenode, ips, planned, leaving=going)
    [shell, flag, script] = render_value(manifest["roles"]["datanode"]["drain"]["done"], context, "drain.done")
    assert (shell, flag) == ("sh", "-c")
    (tmp_path / "report").write_text(report or "")
    hdfs = tmp_path / "hdfs"
    hdfs.write_text(f"#!/bin/sh\ncat {tmp_path / 'report'}\nexit {0 if report is not None else 255}\n")
    hdfs.chmod(0o755)
    run = subprocess.run([shell, flag, script], env={"PATH": f"{tmp_path}:/usr/bin:/bin"}, capture_output=True,
                         text=True, timeout=30)
    assert (run.returncode, run.stdout.strip().splitlines()[-1:] or [""]) == (code, [said])


def test_ha_is_two_namenodes_over_three_journal_members_and_clients_use_the_nameservice(manifest):
    """settings.ha: namenode-1/2 (each with its failover controller), journalnode-1..3 (a JournalNode
    and a ZooKeeper server each); every member and a job's driver name HDFS as hdfs://spindle with
    both NameNodes' addresses, so a client follows a failover."""
    members = rendered(manifest, {"settings": {"ha": True}, "roles": {"resourcemanager": {"count": 1}}})
    assert list(members) == ["namenode-1", "namenode-2", "datanode-1", "datanode-2", "datanode-3",
                             "journalnode-1", "journalnode-2", "journalnode-3", "resourcemanager-1"]
    journals = ["10.0.0.6", "10.0.0.7", "10.0.0.8"]
    client = {"dfs.nameservices": "spindle", "dfs.ha.namenodes.spindle": "namenode-1,namenode-2",
              "dfs.namenode.rpc-address.spindle.namenode-1": "10.0.0.1:8020",
              "dfs.namenode.rpc-address.spindle.namenode-2": "10.0.0.2:8020",
              "dfs.namenode.http-address.spindle.namenode-1": "10.0.0.1:9870",
              "dfs.namenode.http-address.spindle.namenode-2": "10.0.0.2:9870",
              "dfs.client.failover.proxy.provider.spindle":
                  "org.apache.hadoop.hdfs.server.namenode.ha.RequestHedgingProxyProvider",
              "dfs.namenode.shared.edits.dir": "qjournal://10.0.0.6:8485;10.0.0.7:8485;10.0.0.8:8485/spindle"}
    command, env = driver(manifest, {"settings": {"ha": True}})
    job_sites = [parse(env["SPINDLE_CORE_SITE"]), parse(env["SPINDLE_HDFS_SITE"])]
    for name, container in members.items():
        core, hdfs = properties(container, "core-site.xml"), properties(container, "hdfs-site.xml")
        assert core["fs.defaultFS"] == "hdfs://spindle", name
        assert core["ha.zookeeper.quorum"] == ",".join(f"{ip}:2181" for ip in journals), name
        # A call to a NameNode whose node died (no reset on its connection) ends after 10 s, not never.
        assert core["ipc.client.rpc-timeout.ms"] == "10000", name
        assert client.items() <= hdfs.items(), name
        assert "dfs.namenode.rpc-address" not in hdfs, name
    assert job_sites[0]["fs.defaultFS"] == "hdfs://spindle" and client.items() <= job_sites[1].items()
    assert job_sites[0]["ipc.client.rpc-timeout.ms"] == "10000"
    assert properties(members["resourcemanager-1"], "yarn-site.xml")[
        "yarn.resourcemanager.fs.state-store.uri"] == "hdfs://spindle/system/yarn/rmstore"
    for index in (1, 2):
        other = f"namenode-{3 - index}"
        assert members[f"namenode-{index}"]["command"] == [
            "sh", "-c", f"exec hdfs-namenode-ha /data/1/name namenode-{index} {other} 'CID-c1'"]
    for index, ip in enumerate(journals, start=1):
        container = members[f"journalnode-{index}"]
        peers = " ".join(j for j in journals if j != ip)
        assert container["command"] == ["sh", "-c", f"exec hdfs-journal /data/1 {index} {peers}"]
        hdfs = properties(container, "hdfs-site.xml")
        assert (hdfs["dfs.journalnode.edits.dir"], hdfs["dfs.journalnode.rpc-address"]) == \
            ("/data/1/journal", f"{ip}:8485")
        zoo = dict(line.split("=", 1) for line in container["files"]["/etc/hadoop/zoo.cfg"].splitlines())
        assert zoo["clientPortAddress"] == ip and zoo["dataDir"] == "/data/1/zookeeper"
        assert {k: v for k, v in zoo.items() if k.startswith("server.")} == {
            f"server.{i}": f"{j}:2888:3888" for i, j in enumerate(journals, start=1)}


def test_without_ha_one_namenode_and_no_journal(manifest):
    members = rendered(manifest, {"settings": {"ha": False}})
    assert list(members) == ["namenode-1", "datanode-1", "datanode-2", "datanode-3"]
    hdfs = properties(members["namenode-1"], "hdfs-site.xml")
    assert hdfs["dfs.namenode.rpc-address"] == "10.0.0.1:8020" and "dfs.nameservices" not in hdfs
    core = properties(members["datanode-1"], "core-site.xml")
    assert "ha.zookeeper.quorum" not in core and "ipc.client.rpc-timeout.ms" not in core


@pytest.mark.parametrize("options", [
    {"roles": {"namenode": {"count": 2}}},  # the NameNodes' count comes from settings.ha
    {"roles": {"journalnode": {"count": 3}}},
    {"settings": {"ha": "yes"}},
    {"roles": {"journalnode": {"disks": {"hdd": 2}}}},
])
def test_ha_is_asked_for_by_its_setting_only(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert refused.value.code == "INVALID_OPTIONS"


KDC_PLATFORM = {"jvm_options": "", "kdc": "172.31.250.1", "realm": "SPINDLE"}
KERBEROS = {"settings": {"kerberos": True, "ha": False}}


def kerberized(manifest, options: dict) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Each member's container and principals by name on a platform with a KDC (IPs as ``rendered``)."""
    resolved = validate_options(manifest, options)
    planned = plan_members("c1", manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    containers = {m.name: render_member({"id": "c1"}, manifest, resolved, m, ips, planned, platform=KDC_PLATFORM)
                  for m in planned}
    names = {m.name: member_principals({"id": "c1"}, manifest, resolved, m, ips, planned, platform=KDC_PLATFORM)
             for m in planned}
    return containers, names


def test_kerberos_is_off_by_default_and_then_nobody_gets_keys(manifest):
    containers, names = kerberized(manifest, {"settings": {"ha": False}})
    assert names == {name: [] for name in containers}
    for container in containers.values():
        assert "hadoop.security.authentication" not in properties(container, "core-site.xml")
        assert container["files"]["/etc/hadoop/krb5.conf"] == ""


def test_with_kerberos_hdfs_takes_only_this_cluster_s_principals_and_datanodes_authenticate_transfers(manifest):
    containers, names = kerberized(manifest, KERBEROS)
    namenode_ip = properties(containers["namenode-1"], "hdfs-site.xml")["dfs.namenode.rpc-address"].split(":")[0]
    # the NameNode's web server also has its HTTP principal, named after the address its callers use
    # (one for callers naming it by its address, one for Java's, which name it by its name in the hosts file)
    assert names == {name: ["hdfs/c1", f"HTTP/{namenode_ip}", "HTTP/namenode-1.c1"] if name == "namenode-1"
                     else ["hdfs/c1"] for name in containers}
    assert f"{namenode_ip} namenode-1.c1 namenode-1\n" in containers["datanode-1"]["files"]["/etc/hadoop/hosts"]
    assert ip_principals(names["namenode-1"]) == [f"HTTP/{namenode_ip}"]
    for name, container in containers.items():
        core = properties(container, "core-site.xml")
        assert core["hadoop.security.authentication"] == "kerberos"
        assert core["hadoop.security.authorization"] == "true"
        # only this cluster's two principals map to a user; another cluster's hdfs/<id> maps to none
        assert core["hadoop.security.auth_to_local"].split() == [
            "RULE:[2:$1/$2@$0](hdfs/c1@SPINDLE)s/.*/hdfs/", "RULE:[2:$1/$2@$0](client/c1@SPINDLE)s/.*/hdfs/"]
        hdfs = properties(container, "hdfs-site.xml")
        assert hdfs["dfs.namenode.kerberos.principal"] == hdfs["dfs.datanode.kerberos.principal"] == "hdfs/c1@SPINDLE"
        # a caller takes the NameNode for it only if it has that principal (Hadoop's default pattern: any)
        assert hdfs["dfs.namenode.kerberos.principal.pattern"] == "hdfs/c1@SPINDLE"
        assert hdfs["dfs.block.access.token.enable"] == "true"
        assert hdfs["dfs.data.transfer.protection"] == "authentication"
        assert "kdc = 172.31.250.1:88" in container["files"]["/etc/hadoop/krb5.conf"]
        assert container["env"]["SPINDLE_PRINCIPAL"] == "hdfs/c1", name
    namenode = properties(containers["namenode-1"], "hdfs-site.xml")
    assert namenode["dfs.namenode.keytab.file"] == "/tmp/spindle.keytab"
    # its web server (UI, JMX, WebHDFS) asks for SPNEGO: naming a user (user.name=) is not enough
    # (any HTTP principal of its keytab: its address's and its name's)
    assert (namenode["hadoop.http.authentication.type"], namenode["hadoop.http.authentication.kerberos.principal"]) == (
        "kerberos", "*")
    datanode = containers["datanode-1"]
    hdfs = properties(datanode, "hdfs-site.xml")
    # a DataNode without root (no privileged ports): SASL on its transfers and its web server on HTTPS only
    assert (hdfs["dfs.datanode.keytab.file"], hdfs["dfs.http.policy"], hdfs["dfs.datanode.https.address"]) == (
        "/tmp/spindle.keytab", "HTTPS_ONLY", f"{hdfs['dfs.datanode.hostname']}:9865")
    assert properties(datanode, "ssl-server.xml")["ssl.server.keystore.location"] == "/tmp/datanode.p12"
    assert "keytool -genkeypair" in datanode["command"][-1] and "-keystore /tmp/datanode.p12" in datanode["command"][-1]


def test_with_kerberos_a_job_gets_the_client_principal_and_the_kdc(manifest):
    resolved = validate_options(manifest, KERBEROS)
    _, env = driver(manifest, KERBEROS)
    assert env["SPINDLE_PRINCIPAL"] == "client/c1"
    assert "kdc = " in env["SPINDLE_KRB5_CONF"]
    assert parse(env["SPINDLE_HDFS_SITE"])["dfs.data.transfer.protection"] == "authentication"
    context = {"settings": resolved["settings"], "cluster": {"id": "c1"}, "platform": KDC_PLATFORM}
    assert principals(manifest, context, ["c1"], "job_principals") == ["client/c1"]


@pytest.mark.parametrize("options", [
    {"settings": {"kerberos": True}},  # ha left to its default (on from 3 nodes): not yet with Kerberos
    {"settings": {"kerberos": True, "ha": True}},
    {"settings": {"kerberos": True, "ha": False}, "roles": {"resourcemanager": {"count": 1}}},
])
def test_kerberos_is_refused_with_ha_or_yarn_for_now(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert refused.value.status == 422


def test_a_principal_of_another_cluster_is_never_rendered(manifest):
    bad = {**manifest, "kerberos": {"principals": ["hdfs/c2", "HTTP/namenode-1.c2"]}}
    context = {"settings": {}, "cluster": {"id": "c1"}, "platform": KDC_PLATFORM}
    with pytest.raises(RenderError, match="hdfs/c2"):
        principals(bad, context, ["c1"])
    assert principals({**manifest, "kerberos": {"principals": ["HTTP/namenode-1.c1", "x/c3"]}}, context,
                      ["c1", "c3"]) == ["HTTP/namenode-1.c1", "x/c3"]
    # a member's own IP, and no other
    with_ip = {**context, "member": {"ip": "10.0.0.7"}}
    own = {**manifest, "kerberos": {"principals": ["HTTP/10.0.0.7", ""]}}
    assert principals(own, with_ip, ["c1"]) == ["HTTP/10.0.0.7"]
    with pytest.raises(RenderError, match="10.0.0.8"):
        principals({**manifest, "kerberos": {"principals": ["HTTP/10.0.0.8"]}}, with_ip, ["c1"])
    assert cluster_principal_patterns("c1", ["10.0.0.7"]) == ["*/c1", "*/*.c1", "*/10.0.0.7"]
    assert principals(manifest, {**context, "platform": {**KDC_PLATFORM, "kdc": ""}}, ["c1"]) == []
