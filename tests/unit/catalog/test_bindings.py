"""A product's ``bindings`` become its ``bind`` launch option: a declared name takes a cluster id."""
import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from spindle_common.catalog import CatalogError, load_catalog, load_manifest, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.job_runner import driver_command, driver_context
from spindle_orchestrator.render import plan_members, render_member, render_value

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
SPARK = load_catalog(REPO_CATALOG).get("spark", "3.5")


@pytest.mark.parametrize("options", [{}, {"bind": {}}, {"bind": {"hdfs": "c0123456789"}}])
def test_valid_bindings(options):
    assert validate_options(SPARK, options).get("bind", {}) == options.get("bind", {})


@pytest.mark.parametrize(("options", "path"), [
    ({"bind": {"hdfs": "../c0123456789"}}, "bind.hdfs"),
    ({"bind": {"hdfs": 7}}, "bind.hdfs"),
    ({"bind": {"kafka": "c0123456789"}}, "bind"),
    ({"bind": "c0123456789"}, "bind"),
])
def test_bad_bindings_are_invalid_options(options, path):
    with pytest.raises(ApiError) as caught:
        validate_options(SPARK, options)
    assert caught.value.code == "INVALID_OPTIONS"
    assert [e["path"] for e in caught.value.details["errors"]] == [path]


def test_a_product_without_bindings_takes_no_bind_option():
    web = load_catalog(Path("catalog")).get("static-web", "1.0")
    assert "bind" not in web["options_schema"]["properties"]
    with pytest.raises(ApiError):
        validate_options(web, {"bind": {"hdfs": "c0123456789"}})


def test_a_manifest_writing_its_own_bind_option_is_refused(tmp_path):
    manifest = json.loads(Path("catalog/spark/3.5/manifest.json").read_text())
    broken = copy.deepcopy(manifest)
    broken["options_schema"]["properties"]["bind"] = {"type": "object"}
    folder = tmp_path / "spark" / "3.5"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(broken))
    with pytest.raises(CatalogError, match="options_schema.properties.bind"):
        load_manifest(folder / "manifest.json")
    del manifest["bindings"]["hdfs"]["product"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CatalogError, match="bindings.hdfs"):
        load_manifest(folder / "manifest.json")


def test_spark_jobs_and_engine_members_bound_to_an_hdfs_with_ha_know_both_namenodes():
    """Spark's driver gets the nameservice (hdfs://spindle) and both NameNodes as spark.hadoop.*
    system properties (SparkConf reads them; its executors get them from the driver); the engine's
    WebHDFS client gets both NameNodes' WebHDFS addresses."""
    namenodes = [{"id": f"nn{i}", "name": f"namenode-{i}", "ip": f"10.2.0.{i}", "node": f"n{i}"} for i in (1, 2)]
    journals = [{"id": f"j{i}", "name": f"journalnode-{i}", "ip": f"10.2.0.{5 + i}", "node": f"n{i}"}
                for i in (1, 2, 3)]
    hdfs = {"cluster": {"id": "chdfs000001"}, "secret": "s",
            "peers": {"namenode": namenodes, "datanode": [], "journalnode": journals}}
    spark = SPARK
    cluster = SimpleNamespace(id="c1", owner="ann", product="spark", version="3.5", options={},
                              members=[SimpleNamespace(member_id="m", role="master", index=1, ip="10.1.0.2")])
    context = driver_context(cluster, SimpleNamespace(id="j1", main="job.py"), "10.1.0.9",  # type: ignore[arg-type]
                             {"hdfs": hdfs}, spark)
    assert "spark.hadoop.fs.defaultFS=hdfs://spindle" in driver_command(spark, context, [])
    assert render_value(spark["jobs"]["env"], context, "env")["SPARK_SUBMIT_OPTS"].split() == [
        "-Dspark.hadoop.dfs.nameservices=spindle", "-Dspark.hadoop.dfs.ha.namenodes.spindle=namenode-1,namenode-2",
        "-Dspark.hadoop.dfs.namenode.rpc-address.spindle.namenode-1=10.2.0.1:8020",
        "-Dspark.hadoop.dfs.namenode.rpc-address.spindle.namenode-2=10.2.0.2:8020",
        "-Dspark.hadoop.dfs.client.failover.proxy.provider.spindle="
        "org.apache.hadoop.hdfs.server.namenode.ha.RequestHedgingProxyProvider"]

    engine = load_catalog(REPO_CATALOG).get("engine", "1.0")
    options = validate_options(engine, {})
    planned = plan_members("c2", engine, options)
    [executor, *_] = [m for m in planned if m.role == "executor"]
    container = render_member({"id": "c2"}, engine, options, executor, {m.member_id: "10.3.0.2" for m in planned},
                              planned, {"hdfs": hdfs})
    cluster = SimpleNamespace(id="c2", owner="ann", product="engine", version="1.0", options=options,
                              members=[SimpleNamespace(member_id=m.member_id, role=m.role, index=m.index, ip="10.3.0.2")
                                       for m in planned])
    driver = render_value(engine["jobs"]["env"], driver_context(
        cluster, SimpleNamespace(id="j2", main="job.py"), "10.3.0.9", {"hdfs": hdfs}, engine), "env")  # type: ignore[arg-type]
    for env in (container["env"], driver):
        assert env["SPINDLE_HDFS_WEBHDFS"] == "http://10.2.0.1:9870,http://10.2.0.2:9870"
