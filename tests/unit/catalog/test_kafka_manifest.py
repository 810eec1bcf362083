"""The kafka 4.0 manifest (KRaft combined mode): launch options → each broker's rendered
server.properties and command — every broker a controller of the quorum of its peers, node.id its
index, log.dirs on every dedicated disk and the metadata on the first, listeners on the member's IP,
replication settings capped by the brokers there are — and the job driver's command."""
import subprocess
from pathlib import Path

import pytest

from spindle_common.catalog import load_catalog, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.render import plan_members, render_member, render_value

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
CLUSTER = "c0123456789"


@pytest.fixture(scope="module")
def manifest():
    return load_catalog(REPO_CATALOG).get("kafka", "4.0")


def rendered(manifest, options: dict) -> dict[str, dict]:
    """Each broker's rendered container by name, the IPs 10.0.0.1, 10.0.0.2, … in plan order."""
    resolved = validate_options(manifest, options)
    planned = plan_members(CLUSTER, manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    return {m.name: render_member({"id": CLUSTER}, manifest, resolved, m, ips, planned) for m in planned}


def properties(container: dict) -> dict[str, str]:
    text = container["files"]["/etc/kafka/server.properties"]
    pairs = [line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#")]
    assert all(len(pair) == 2 for pair in pairs), text
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key set twice: {keys}"
    return dict(pairs)


@pytest.mark.parametrize(("options", "brokers", "log_dirs", "replication", "min_isr", "partitions"), [
    ({}, 3, "/data/1/kafka,/data/2/kafka", "3", "2", "6"),
    ({"roles": {"broker": {"count": 1, "disks": {"hdd": 1}}}}, 1, "/data/1/kafka", "1", "1", "6"),
    ({"roles": {"broker": {"count": 2, "disks": {"hdd": 1, "ssd": 2}}},
      "settings": {"default_replication_factor": 3, "min_insync_replicas": 3, "num_partitions": 12}},
     2, "/data/1/kafka,/data/2/kafka,/data/3/kafka", "2", "2", "12"),
    ({"roles": {"broker": {"count": 5, "disks": {"hdd": 0, "nvme": 1, "ssd": 1}}},
      "settings": {"default_replication_factor": 3, "min_insync_replicas": 1}},
     5, "/data/1/kafka,/data/2/kafka", "3", "1", "6"),
])
def test_brokers_are_a_kraft_quorum_over_every_disk(manifest, options, brokers, log_dirs, replication, min_isr,
                                                    partitions):
    members = rendered(manifest, options)
    assert list(members) == [f"broker-{i}" for i in range(1, brokers + 1)]
    voters = ",".join(f"{i}@10.0.0.{i}:9093" for i in range(1, brokers + 1))
    for index in range(1, brokers + 1):
        ip = f"10.0.0.{index}"
        config = properties(members[f"broker-{index}"])
        assert config["process.roles"] == "broker,controller"
        assert config["node.id"] == str(index)
        assert config["controller.quorum.voters"] == voters
        assert config["listeners"] == f"PLAINTEXT://{ip}:9092,CONTROLLER://{ip}:9093"
        assert config["advertised.listeners"] == f"PLAINTEXT://{ip}:9092"
        assert config["controller.listener.names"] == "CONTROLLER"
        assert config["log.dirs"] == log_dirs
        assert config["metadata.log.dir"] == "/data/1/metadata"
        assert (config["default.replication.factor"], config["min.insync.replicas"], config["num.partitions"]) == \
            (replication, min_isr, partitions)
        internal = str(min(3, brokers))
        assert config["offsets.topic.replication.factor"] == internal
        assert config["transaction.state.log.replication.factor"] == internal
        assert config["transaction.state.log.min.isr"] == str(min(2, brokers))


def test_a_broker_formats_its_storage_with_the_clusters_id_then_runs(manifest):
    broker = rendered(manifest, {"roles": {"broker": {"mem_mb": 1024}}})["broker-2"]
    assert broker["command"][:2] == ["sh", "-c"]
    [script] = broker["command"][2:]
    # KRaft wants 16 bytes in URL-safe base64 (22 characters); the cluster id's letters are in that alphabet.
    assert script == ("kafka storage format --config /etc/kafka/server.properties --cluster-id "
                      f"'spdl{CLUSTER}AAAAAAA' --ignore-formatted && exec kafka server /etc/kafka/server.properties "
                      "${SPINDLE_RACK:+--override broker.rack=$SPINDLE_RACK}")
    assert len(f"spdl{CLUSTER}AAAAAAA") == 22
    assert broker["env"]["KAFKA_HEAP_OPTS"] == "-Xmx512m -Xms512m"
    assert broker["health"] == {"tcp_port": 9092, "timeout_seconds": 180}
    assert broker["security"] == {"user": "65534:65534", "read_only_root": True}
    assert manifest["roles"]["broker"]["restart"] == "replace"


@pytest.mark.parametrize(("rack", "server_args"), [
    ("rack-1", ["server", "/etc/kafka/server.properties", "--override", "broker.rack=rack-1"]),
    (None, ["server", "/etc/kafka/server.properties"]),  # outside Spindle: no rack
])
def test_a_broker_s_rack_is_its_node_s_failure_domain(manifest, tmp_path, rack, server_args):
    """The script as the container's shell runs it, with a `kafka` that records its arguments."""
    [script] = rendered(manifest, {})["broker-1"]["command"][2:]
    fake = tmp_path / "kafka"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" >> "$0.calls"\n')
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", **({"SPINDLE_RACK": rack} if rack else {})}
    subprocess.run(["sh", "-c", script], env=env, check=True)
    calls = (tmp_path / "kafka.calls").read_text().splitlines()
    assert calls[:1] == ["storage"] and calls[-len(server_args):] == server_args, calls


def test_a_job_gets_every_broker_as_its_bootstrap_servers(manifest):
    peers = {"broker": [{"id": f"{CLUSTER}-broker-{i}", "name": f"broker-{i}", "ip": f"10.0.0.{i}"}
                        for i in (1, 2, 3)]}
    context = {"cluster": {"id": CLUSTER}, "peers": peers, "settings": {},
               "job": {"id": "j1", "main": "/job/produce.py", "dir": "/job", "output": "/job/output"},
               "driver": {"ip": "10.0.0.9"}}
    assert render_value(manifest["jobs"]["command"], context, "jobs command") == [
        "env", "KAFKA_BOOTSTRAP_SERVERS=10.0.0.1:9092,10.0.0.2:9092,10.0.0.3:9092", "python3", "/job/produce.py"]
    assert manifest["jobs"]["image"] == manifest["image"] == "spindle/kafka:4.0"


@pytest.mark.parametrize("options", [
    {"roles": {"broker": {"count": 0}}},
    {"roles": {"broker": {"count": 65}}},
    {"roles": {"broker": {"disks": {"hdd": 0}}}},  # no disk at all
    {"roles": {"broker": {"disks": {"hdd": 0, "ssd": 0, "nvme": 0}}}},
    {"roles": {"broker": {"disks": {"tape": 1}}}},
    {"roles": {"broker": {"mem_mb": 256}}},
    {"settings": {"default_replication_factor": 0}},
    {"settings": {"min_insync_replicas": 11}},
    {"settings": {"num_partitions": 0}},
    {"settings": {"log.retention.hours": 1}},
])
def test_bad_options_are_refused(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS")
