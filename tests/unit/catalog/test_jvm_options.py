"""The platform's JVM options (``SPINDLE_PRODUCT_JVM_OPTIONS``, templates' ``platform.jvm_options``)
reach every JVM each product starts — daemons and their tools, job drivers, the MapReduce tasks and
Spark executors those start — and add nothing when the platform sets none; the setting takes JVM
options only."""
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from spindle_common.catalog import load_manifest, validate_options
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.job_runner import driver_command, driver_context
from spindle_orchestrator.render import plan_members, platform_context, render_member, render_value
from tests.unit.catalog.test_jupyterlab_manifest import TOKEN

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
# What a default launch needs (a token), and the bindings it could have, none made
LAUNCH = {"jupyterlab": {"settings": {"token": TOKEN}}}
UNBOUND = {"spark": {"hdfs": None}, "jupyterlab": {"spark": None, "engine": None, "hdfs": None}}


def members(product: str, version: str, options: str) -> dict[str, dict]:
    """Every member of the product's default launch, rendered with the platform's ``options``."""
    manifest = load_manifest(REPO_CATALOG / product / version / "manifest.json")
    resolved = validate_options(manifest, LAUNCH.get(product, {}))
    planned = plan_members("c1", manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    return {m.name: render_member({"id": "c1"}, manifest, resolved, m, ips, planned, UNBOUND.get(product),
                                  platform=platform_context(options))
            for m in planned}


def job(product: str, version: str, options: str) -> tuple[list[str], dict[str, str]]:
    """The product's job driver (command, env) with the platform's ``options``."""
    manifest = load_manifest(REPO_CATALOG / product / version / "manifest.json")
    resolved = validate_options(manifest, {})
    planned = plan_members("c1", manifest, resolved)
    cluster = SimpleNamespace(id="c1", owner="ann", product=product, version=version, options=resolved,
                              members=[SimpleNamespace(member_id=m.member_id, role=m.role, index=m.index,
                                                       ip=f"10.0.0.{i}") for i, m in enumerate(planned, start=1)])
    context = driver_context(cluster, SimpleNamespace(id="j1", main="main"), "10.0.0.99",  # type: ignore[arg-type]
                             UNBOUND.get(product), manifest, platform_context(options))
    return driver_command(manifest, context, []), render_value(manifest["jobs"].get("env", {}), context, "env")


# product, version, the env variable each member's launcher adds to its JVMs
DAEMONS = [("hadoop", "3.3", "HADOOP_OPTS"), ("kafka", "4.0", "KAFKA_OPTS"), ("cassandra", "5.0", "CASSANDRA_OPTS"),
           ("spark", "3.5", "SPARK_DAEMON_JAVA_OPTS"), ("spark", "3.5", "SPARK_LAUNCHER_OPTS"),
           ("jupyterlab", "4", "SPARK_LAUNCHER_OPTS")]


@pytest.mark.parametrize(("product", "version", "variable"), DAEMONS)
def test_every_members_launcher_gets_the_options_and_nothing_without_them(product, version, variable):
    assert {name: m["env"][variable] for name, m in members(product, version, OPTIONS).items()} == \
        {name: OPTIONS for name in members(product, version, "")}
    assert {m["env"][variable] for m in members(product, version, "").values()} == {""}


@pytest.mark.parametrize("options", [OPTIONS, ""])
def test_mapreduce_application_masters_and_tasks_get_them_after_their_own(options):
    """(The NodeManagers start them from mapred-site.xml; the job driver submits with the same file.)"""
    files = [m["files"]["/etc/hadoop/mapred-site.xml"] for m in members("hadoop", "3.3", options).values()
             if "/etc/hadoop/mapred-site.xml" in m["files"]]
    _, env = job("hadoop", "3.3", options)
    assert len(files) >= 3
    for mapred in [*files, env["SPINDLE_MAPRED_SITE"]]:
        for name in ("yarn.app.mapreduce.am.command-opts", "mapreduce.map.java.opts", "mapreduce.reduce.java.opts"):
            value = mapred.split(f"<name>{name}</name><value>")[1].split("</value>")[0]
            assert value.startswith("-Xmx"), value
            assert value.endswith(f"-Djdk.net.hosts.file=/tmp/hadoop-hosts {options}"), value


@pytest.mark.parametrize("options", [OPTIONS, ""])
def test_job_drivers_and_the_executors_they_start_get_them(options):
    _, hadoop_env = job("hadoop", "3.3", options)
    assert hadoop_env["HADOOP_OPTS"] == options
    spark_command, spark_env = job("spark", "3.5", options)
    assert f"spark.executor.extraJavaOptions={options}" in spark_command
    assert spark_env["SPARK_LAUNCHER_OPTS"] == options
    assert spark_env["SPARK_SUBMIT_OPTS"].split() == options.split()  # (no HDFS bound: nothing else)


def test_jupyterlabs_spark_driver_and_executors_get_them_in_its_spark_defaults():
    [server] = members("jupyterlab", "4", OPTIONS).values()
    defaults = server["files"]["/etc/spindle/spark-defaults.conf"].splitlines()
    assert f"spark.driver.extraJavaOptions {OPTIONS}" in defaults
    assert f"spark.executor.extraJavaOptions {OPTIONS}" in defaults
    [plain] = members("jupyterlab", "4", "").values()
    assert "extraJavaOptions" not in plain["files"]["/etc/spindle/spark-defaults.conf"]


@pytest.mark.parametrize(("value", "kept"), [
    ("", ""),
    ("  -XX:TieredStopAtLevel=1   -XX:+UseSerialGC ", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"),
    *[(kept, kept) for kept in ("-Xss512k -Dfile.encoding=UTF-8 -XX:ErrorFile=/tmp/hs_err.log",)],
    ("-Xmx1g; touch /tmp/x", None),
    ("-XX:OnError=\"sh -c id\"", None),
    ("--add-opens java.base/java.lang=ALL-UNNAMED", None),  # a word not an option
    ("-Dx=$(id)", None),
    ("-Dx=</value><value>", None),
    ("TieredStopAtLevel=1", None),
])
def test_the_setting_takes_jvm_options_only(value, kept, monkeypatch):
    monkeypatch.setenv("SPINDLE_PRODUCT_JVM_OPTIONS", value)
    if kept is None:
        with pytest.raises(ValidationError, match="not JVM options"):
            Settings()
    else:
        assert Settings().platform["jvm_options"] == kept
