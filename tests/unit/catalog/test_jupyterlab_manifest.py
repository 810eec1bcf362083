"""The jupyterlab 4 manifest: launch options (+ the clusters it is bound to) → the server's rendered
command, env and spark-defaults.conf — the token required and strong, the notebooks on the one
dedicated disk, the kernel's Spark driver on the bound master with the member's IP as driver host,
HDFS as the default file system when bound, the engine's addresses and each bound secret in env
(never on the command line)."""
from pathlib import Path

import pytest

from spindle_common.catalog import load_catalog, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.render import plan_members, render_member

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
TOKEN = "tok_" + "a1B2-" * 6
SPARK = {"cluster": {"id": "cspark00001", "owner": "ann", "product": "spark", "version": "3.5"},
         "peers": {"master": [{"id": "m", "name": "master-1", "ip": "10.1.0.2", "node": "n1"}],
                   "worker": [{"id": "w", "name": "worker-1", "ip": "10.1.0.3", "node": "n1"}]},
         "secret": "spark-secret"}
HDFS = {"cluster": {"id": "chdfs000001", "owner": "ann", "product": "hadoop", "version": "3.3"},
        "peers": {"namenode": [{"id": "nn", "name": "namenode-1", "ip": "10.2.0.2", "node": "n1"}],
                  "datanode": [{"id": "d1", "name": "datanode-1", "ip": "10.2.0.3", "node": "n1"},
                               {"id": "d2", "name": "datanode-2", "ip": "10.2.0.4", "node": "n2"}]},
        "secret": "hdfs-secret"}
ENGINE = {"cluster": {"id": "cengine0001", "owner": "ann", "product": "engine", "version": "1.0"},
          "peers": {"backend": [{"id": "b", "name": "backend-1", "ip": "10.3.0.2", "node": "n1"}],
                    "executor": [{"id": "e1", "name": "executor-1", "ip": "10.3.0.3", "node": "n1"},
                                 {"id": "e2", "name": "executor-2", "ip": "10.3.0.4", "node": "n2"}]},
          "secret": "engine-secret"}


@pytest.fixture(scope="module")
def manifest():
    return load_catalog(REPO_CATALOG).get("jupyterlab", "4")


def rendered(manifest, options: dict, bound: dict, ip: str | None = "10.0.0.9") -> dict:
    resolved = validate_options(manifest, options)
    planned = plan_members("c1", manifest, resolved)
    assert [m.name for m in planned] == ["server-1"]
    return render_member({"id": "c1"}, manifest, resolved, planned[0], {planned[0].member_id: ip}, planned,
                         {"spark": None, "engine": None, "hdfs": None, **bound})


def spark_conf(container: dict) -> dict[str, str]:
    lines = container["files"]["/etc/spindle/spark-defaults.conf"].splitlines()
    return dict(line.split(" ", 1) for line in lines if line and not line.startswith("#"))


def test_unbound_the_kernel_runs_spark_locally_and_the_notebooks_are_on_the_disk(manifest):
    container = rendered(manifest, {"settings": {"token": TOKEN}}, {})
    assert container["image"] == "spindle/jupyterlab:4"
    assert container["command"][0] == "spindle-jupyterlab"
    assert "--ServerApp.ip=10.0.0.9" in container["command"] and "--ServerApp.port=8888" in container["command"]
    assert "--PasswordIdentityProvider.allow_password_change=False" in container["command"]
    assert not any(TOKEN in arg for arg in container["command"]), "the token is not on the command line"
    env = container["env"]
    assert env["JUPYTER_TOKEN"] == TOKEN
    assert env["SPINDLE_NOTEBOOK_DIR"] == "/data/1/notebooks" and env["SPARK_LOCAL_DIRS"] == "/data/1/.spark-local"
    assert (env["SPARK_MASTER"], env["SPINDLE_SPARK_SECRET"], env["SPINDLE_ENGINE_SECRET"]) == ("", "", "")
    assert (env["SPINDLE_ENGINE_MODE"], env["SPINDLE_ENGINE_AGENTS"], env["SPINDLE_HDFS_WEBHDFS"]) == ("local", "", "")
    assert env["SPINDLE_HDFS_DATANODE_NODES"] == "{}"
    assert spark_conf(container) == {
        "spark.master": "local[*]", "spark.driver.host": "10.0.0.9", "spark.driver.bindAddress": "10.0.0.9",
        "spark.driver.memory": "512m", "spark.executor.memory": "768m", "spark.hadoop.fs.defaultFS": "file:///",
        "spark.ui.port": "4040", "spark.ui.killEnabled": "false"}
    assert container["health"] == {"tcp_port": 8888, "timeout_seconds": 120}
    assert container["security"] == {"user": "65534:65534", "read_only_root": True}


def test_bound_to_spark_hdfs_and_engine(manifest):
    options = {"settings": {"token": TOKEN, "driver_memory_mb": 1024, "executor_memory_mb": 2048},
               "roles": {"server": {"disks": {"hdd": 0, "ssd": 1}}}}
    container = rendered(manifest, options, {"spark": SPARK, "hdfs": HDFS, "engine": ENGINE})
    conf = spark_conf(container)
    assert conf["spark.master"] == "spark://10.1.0.2:7077"
    assert (conf["spark.driver.host"], conf["spark.driver.bindAddress"]) == ("10.0.0.9", "10.0.0.9")
    assert (conf["spark.driver.memory"], conf["spark.executor.memory"]) == ("1024m", "2048m")
    assert conf["spark.hadoop.fs.defaultFS"] == "hdfs://10.2.0.2:8020"
    assert "spark-secret" not in container["files"]["/etc/spindle/spark-defaults.conf"], \
        "the secret is added inside the container, not in the file on the host"
    env = container["env"]
    assert (env["SPARK_MASTER"], env["SPINDLE_SPARK_SECRET"]) == ("spark://10.1.0.2:7077", "spark-secret")
    assert env["SPINDLE_HDFS_WEBHDFS"] == "http://10.2.0.2:9870" and env["HADOOP_USER_NAME"] == "hdfs"
    assert env["SPINDLE_HDFS_DATANODE_NODES"] == '{"10.2.0.3": "n1", "10.2.0.4": "n2"}'
    assert env["SPINDLE_ENGINE_MODE"] == "cluster"
    assert env["SPINDLE_ENGINE_AGENTS"] == "10.3.0.3:7077,10.3.0.4:7077"
    assert env["SPINDLE_ENGINE_STATUS"] == "http://10.3.0.2:8090/"
    assert (env["SPINDLE_ENGINE_DRIVER_HOST"], env["SPINDLE_ENGINE_SECRET"]) == ("10.0.0.9", "engine-secret")
    assert not any("secret" in arg for arg in container["command"])


def test_without_a_floating_ip_the_server_listens_everywhere(manifest):
    container = rendered(manifest, {"settings": {"token": TOKEN}}, {"spark": SPARK}, ip=None)
    assert "--ServerApp.ip=0.0.0.0" in container["command"]
    conf = spark_conf(container)
    assert "spark.driver.host" not in conf and conf["spark.master"] == "spark://10.1.0.2:7077"


@pytest.mark.parametrize(("options", "path"), [
    ({}, "settings"),
    ({"settings": {}}, "settings"),
    ({"settings": {"token": "a" * 23}}, "settings.token"),
    ({"settings": {"token": "a" * 129}}, "settings.token"),
    ({"settings": {"token": "a" * 23 + " "}}, "settings.token"),
    ({"settings": {"token": "a" * 23 + "/"}}, "settings.token"),
    ({"settings": {"token": TOKEN}, "roles": {"server": {"disks": {"hdd": 1, "ssd": 1}}}}, "roles.server.disks"),
    ({"settings": {"token": TOKEN}, "roles": {"server": {"disks": {"hdd": 0}}}}, "roles.server.disks"),
    ({"settings": {"token": TOKEN}, "roles": {"server": {"count": 2}}}, "roles.server.count"),
    ({"settings": {"token": TOKEN}, "bind": {"spark": "not-an-id"}}, "bind.spark"),
    ({"settings": {"token": TOKEN}, "bind": {"kafka": "c0123456789"}}, "bind"),
])
def test_a_launch_without_a_strong_token_or_with_bad_options_is_refused(manifest, options, path):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS")
    assert path in [e["path"] for e in refused.value.details["errors"]]


def test_the_defaults_with_a_token(manifest):
    resolved = validate_options(manifest, {"settings": {"token": TOKEN}, "bind": {"spark": "c0123456789"}})
    assert resolved["roles"]["server"] == {"count": 1, "cpus": 1.0, "mem_mb": 2048, "disks": {"hdd": 1, "ssd": 0}}
    assert resolved["settings"] == {"token": TOKEN, "driver_memory_mb": 512, "executor_memory_mb": 768}
    assert sorted(manifest["bindings"]) == ["engine", "hdfs", "spark"]
    assert [(p["name"], p["port"], p["ui"]) for p in manifest["roles"]["server"]["ports"]] == [
        ("jupyterlab", 8888, True), ("spark-driver-ui", 4040, True)]


HDFS_HA = {**HDFS, "peers": {**HDFS["peers"],
                             "namenode": [{"id": "nn1", "name": "namenode-1", "ip": "10.2.0.2", "node": "n1"},
                                          {"id": "nn2", "name": "namenode-2", "ip": "10.2.0.5", "node": "n2"}],
                             "journalnode": [{"id": f"j{i}", "name": f"journalnode-{i}", "ip": f"10.2.0.{5 + i}",
                                              "node": f"n{i}"} for i in (1, 2, 3)]}}


def test_bound_to_an_hdfs_with_ha_spark_uses_the_nameservice_and_webhdfs_both_namenodes(manifest):
    container = rendered(manifest, {"settings": {"token": TOKEN}}, {"hdfs": HDFS_HA})
    conf = spark_conf(container)
    assert {k: v for k, v in conf.items() if k.startswith("spark.hadoop.")} == {
        "spark.hadoop.fs.defaultFS": "hdfs://spindle", "spark.hadoop.dfs.nameservices": "spindle",
        "spark.hadoop.dfs.ha.namenodes.spindle": "namenode-1,namenode-2",
        "spark.hadoop.dfs.namenode.rpc-address.spindle.namenode-1": "10.2.0.2:8020",
        "spark.hadoop.dfs.namenode.rpc-address.spindle.namenode-2": "10.2.0.5:8020",
        "spark.hadoop.dfs.client.failover.proxy.provider.spindle":
            "org.apache.hadoop.hdfs.server.namenode.ha.RequestHedgingProxyProvider"}
    assert container["env"]["SPINDLE_HDFS_WEBHDFS"] == "http://10.2.0.2:9870,http://10.2.0.5:9870"
