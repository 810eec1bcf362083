"""The hadoop 3.3 manifest (HDFS): launch options → each member's rendered hdfs-site.xml, core-site.xml,
command and env — every dedicated disk of a DataNode in dfs.datanode.data.dir, the NameNode's metadata
on its one disk, replication capped by the DataNodes there are, daemons bound on the member's IP."""
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from spindle_common.catalog import load_catalog, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.render import plan_members, render_member

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"


@pytest.fixture(scope="module")
def manifest():
    return load_catalog(REPO_CATALOG).get("hadoop", "3.3")


def rendered(manifest, options: dict) -> dict[str, dict]:
    """Each member's rendered container by name, the IPs 10.0.0.1, 10.0.0.2, … in plan order."""
    resolved = validate_options(manifest, options)
    planned = plan_members("c1", manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    return {m.name: render_member({"id": "c1"}, manifest, resolved, m, ips, planned) for m in planned}


def properties(container: dict, name: str) -> dict[str, str]:
    root = ET.fromstring(container["files"][f"/etc/hadoop/{name}"])
    return {p.findtext("name"): p.findtext("value") for p in root.iter("property")}


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
        assert container["command"] == ["hdfs", "datanode"]
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
    ({}, {"hdd": 1}), ({"hdd": 1}, {"hdd": 1}), ({"hdd": 0, "ssd": 1}, {"ssd": 1}),
])
def test_the_namenode_has_exactly_one_metadata_disk(manifest, disks, classes):
    resolved = validate_options(manifest, {"roles": {"namenode": {"disks": disks}}})
    [namenode] = [m for m in plan_members("c1", manifest, resolved) if m.role == "namenode"]
    assert namenode.disks == classes


@pytest.mark.parametrize("options", [
    {"roles": {"namenode": {"disks": {"ssd": 1}}}},  # with the default hdd: two disks
    {"roles": {"namenode": {"disks": {"hdd": 0}}}},  # none
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
