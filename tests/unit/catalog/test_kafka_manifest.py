"""The kafka 4.0 manifest (KRaft): launch options → each broker's rendered server.properties and
command — the first three brokers the controllers of a static quorum, node.id its index, log.dirs on
every dedicated disk and the metadata on the first, listeners on the member's IP, replication
settings capped by the brokers there are — the job driver's command, and the drain's plan
(image/kafka_drain.py: a leaving broker's partitions to the brokers that stay)."""
import importlib.util
import subprocess
from pathlib import Path

import pytest

from spindle_common.catalog import load_catalog, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.render import plan_members, render_member, render_value

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
IMAGE = REPO_CATALOG / "kafka" / "4.0" / "image"
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
def test_brokers_over_every_disk_the_first_three_a_kraft_quorum(manifest, options, brokers, log_dirs, replication,
                                                                min_isr, partitions):
    members = rendered(manifest, options)
    assert list(members) == [f"broker-{i}" for i in range(1, brokers + 1)]
    # The first three brokers are the controllers too (a static quorum a resize never changes).
    voters = ",".join(f"{i}@10.0.0.{i}:9093" for i in range(1, min(brokers, 3) + 1))
    for index in range(1, brokers + 1):
        ip = f"10.0.0.{index}"
        config = properties(members[f"broker-{index}"])
        controller = index <= 3
        assert config["process.roles"] == ("broker,controller" if controller else "broker")
        assert config["node.id"] == str(index)
        assert config["controller.quorum.voters"] == voters
        assert config["listeners"] == f"SASL_PLAINTEXT://{ip}:9092" + (f",CONTROLLER://{ip}:9093" if controller else "")
        assert config["advertised.listeners"] == f"SASL_PLAINTEXT://{ip}:9092"
        assert config["controller.listener.names"] == "CONTROLLER"
        # Every listener logs in: SCRAM for clients and brokers, PLAIN to the controllers; no secret here.
        assert config["listener.security.protocol.map"] == "SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"
        assert (config["sasl.enabled.mechanisms"], config["sasl.mechanism.inter.broker.protocol"]) == \
            ("SCRAM-SHA-512", "SCRAM-SHA-512")
        assert (config["listener.name.controller.sasl.enabled.mechanisms"],
                config["sasl.mechanism.controller.protocol"]) == ("PLAIN", "PLAIN")
        assert not any("jaas" in key or "password" in value for key, value in config.items())
        assert config["log.dirs"] == log_dirs
        assert config["metadata.log.dir"] == "/data/1/metadata"
        assert (config["default.replication.factor"], config["min.insync.replicas"], config["num.partitions"]) == \
            (replication, min_isr, partitions)
        internal = str(min(3, brokers))
        assert config["offsets.topic.replication.factor"] == internal
        assert config["transaction.state.log.replication.factor"] == internal
        assert config["transaction.state.log.min.isr"] == str(min(2, brokers))


def test_a_broker_starts_with_the_clusters_id(manifest):
    broker = rendered(manifest, {"roles": {"broker": {"mem_mb": 1024}}})["broker-2"]
    assert broker["command"][:2] == ["sh", "-c"]
    [script] = broker["command"][2:]
    # KRaft wants 16 bytes in URL-safe base64 (22 characters); the cluster id's letters are in that alphabet.
    assert script == (f"exec kafka start /etc/kafka/server.properties 'spdl{CLUSTER}AAAAAAA' "
                      "${SPINDLE_RACK:+--override broker.rack=$SPINDLE_RACK}")
    assert len(f"spdl{CLUSTER}AAAAAAA") == 22
    assert broker["env"]["KAFKA_HEAP_OPTS"] == "-Xmx512m -Xms512m"
    assert broker["health"] == {"tcp_port": 9092, "timeout_seconds": 180}
    assert broker["security"] == {"user": "65534:65534", "read_only_root": True}
    assert manifest["roles"]["broker"]["restart"] == "replace"


@pytest.mark.parametrize(("rack", "server_args"), [
    ("rack-1", ["--override", "broker.rack=rack-1"]),
    (None, []),  # outside Spindle: no rack
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
    assert calls == ["start", "/etc/kafka/server.properties", f"spdl{CLUSTER}AAAAAAA", *server_args], calls


def test_a_job_gets_every_broker_as_its_bootstrap_servers(manifest):
    peers = {"broker": [{"id": f"{CLUSTER}-broker-{i}", "name": f"broker-{i}", "ip": f"10.0.0.{i}"}
                        for i in (1, 2, 3)]}
    context = {"cluster": {"id": CLUSTER}, "peers": peers, "settings": {},
               "job": {"id": "j1", "main": "/job/produce.py", "dir": "/job", "output": "/job/output"},
               "driver": {"ip": "10.0.0.9"}}
    assert render_value(manifest["jobs"]["command"], context, "jobs command") == [
        "env", "KAFKA_BOOTSTRAP_SERVERS=10.0.0.1:9092,10.0.0.2:9092,10.0.0.3:9092",
        "KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT", "KAFKA_SASL_MECHANISM=SCRAM-SHA-512", "KAFKA_SASL_USERNAME=spindle",
        "python3", "/job/produce.py"]
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


def start(tmp_path: Path, secret: str | None) -> tuple[subprocess.CompletedProcess, list[list[str]], Path]:
    """The image's `kafka start` with a `java` that records each call's arguments (the storage tool,
    then the broker): (its run, the calls, the config it wrote)."""
    (tmp_path / "bin").mkdir()
    java = tmp_path / "bin" / "java"
    java.write_text('#!/bin/sh\n{ printf "%s\\n" "$@"; echo --; } >> "$0.calls"\n')
    java.chmod(0o755)
    kafka = tmp_path / "bin" / "kafka"
    kafka.write_text((IMAGE / "kafka").read_text())
    kafka.chmod(0o755)
    rendered = tmp_path / "server.properties"
    rendered.write_text("node.id=1\n")
    config = tmp_path / "runtime.properties"
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "KAFKA_HOME": str(tmp_path),
           "SPINDLE_KAFKA_CONFIG": str(config), **({"SPINDLE_CLUSTER_SECRET": secret} if secret is not None else {})}
    done = subprocess.run([str(kafka), "start", str(rendered), "spdlc0123456789AAAAAAA", "--override",
                           "broker.rack=r1"], env=env, capture_output=True, text=True, check=False)
    recorded = tmp_path / "bin" / "java.calls"
    calls = [call.splitlines() for call in recorded.read_text().split("--\n")[:-1]] if recorded.exists() else []
    return done, calls, config


def test_kafka_start_logs_in_with_the_clusters_secret_kept_out_of_the_rendered_files(tmp_path):
    secret = "ab" * 32
    done, calls, config = start(tmp_path, secret)
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert text.startswith("node.id=1\n") and oct(config.stat().st_mode & 0o777) == "0o600"
    assert (f'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.'
            f'ScramLoginModule required username="spindle" password="{secret}";') in text.splitlines()
    assert (f'listener.name.controller.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule '
            f'required username="spindle" password="{secret}" user_spindle="{secret}";') in text.splitlines()
    [storage, server] = calls
    assert storage[-9:] == ["kafka.tools.StorageTool", "format", "--config", str(config), "--cluster-id",
                            "spdlc0123456789AAAAAAA", "--ignore-formatted", "--add-scram",
                            f"SCRAM-SHA-512=[name=spindle,password={secret}]"]
    assert server[-4:] == ["kafka.Kafka", str(config), "--override", "broker.rack=r1"]


@pytest.mark.parametrize("secret", [None, "", "not-hex\"; evil"])
def test_kafka_start_refuses_without_a_hex_secret(tmp_path, secret):
    done, calls, config = start(tmp_path, secret)
    assert done.returncode != 0 and calls == [] and not config.exists()
    assert "SPINDLE_CLUSTER_SECRET" in done.stderr or "not hex" in done.stderr


def drain_module():
    spec = importlib.util.spec_from_file_location("kafka_drain", IMAGE / "kafka_drain.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# (why, partitions → replicas, brokers, leaving, expected moves, expected refusals)
DRAIN_PLANS = [
    ("nothing on the leaving broker", {("t", 0): [1, 2, 3]}, [1, 2, 3, 4], [4], {}, []),
    ("its replica goes to the one broker without one", {("t", 0): [4, 1, 2]}, [1, 2, 3, 4], [4],
     {("t", 0): [1, 2, 3]}, []),
    ("the least loaded broker takes it, the lower id on a tie",
     {("t", 0): [1, 4], ("t", 1): [2, 3], ("u", 0): [2, 1]}, [1, 2, 3, 4], [4], {("t", 0): [1, 3]}, []),
    ("two leave at once: neither takes the other's",
     {("t", 0): [4, 5, 1], ("t", 1): [5, 2, 3]}, [1, 2, 3, 4, 5], [4, 5],
     {("t", 0): [1, 2, 3], ("t", 1): [2, 3, 1]}, []),
    ("moves spread over the brokers that stay", {("t", i): [4, 1] for i in range(4)}, [1, 2, 3, 4], [4],
     {("t", 0): [1, 2], ("t", 1): [1, 3], ("t", 2): [1, 2], ("t", 3): [1, 3]}, []),
    ("too few brokers would be left for a topic's replication factor",
     {("t", 0): [1, 2, 3], ("u", 0): [3, 1]}, [1, 2, 3], [3], {("u", 0): [1, 2]},
     ["topic t has replication factor 3: only 2 brokers would be left (1, 2)"]),
]


@pytest.mark.parametrize(("why", "partitions", "brokers", "leaving", "moves", "refusals"), DRAIN_PLANS,
                         ids=[row[0] for row in DRAIN_PLANS])
def test_a_leaving_brokers_partitions_go_to_brokers_that_stay(why, partitions, brokers, leaving, moves, refusals):
    plan = drain_module().plan(partitions, brokers, leaving)
    assert (plan.moves, plan.refusals) == (moves, refusals)


def test_a_reassignment_under_way_is_not_a_bigger_replication_factor():
    """Mid-move Kafka lists old and new replicas together ([1, 2, 4, 3]: 3 coming, 4 going): neither
    moved again nor refused as a topic of factor 4 (seen on the platform before this was counted)."""
    plan = drain_module().plan({("t", 0): [1, 2, 4, 3], ("t", 1): [4, 1, 2]}, [1, 2, 3, 4], [4],
                               removing={("t", 0): [4]})
    assert (plan.moves, plan.refusals) == ({("t", 1): [1, 2, 3]}, [])


def test_each_leaving_broker_drains_itself_knowing_every_leaving_brokers_id(manifest):
    drain = manifest["roles"]["broker"]["drain"]
    assert drain["by"] == "self"
    context = {"leaving": {"broker": [{"id": f"c-broker-{i}", "name": f"broker-{i}"} for i in (4, 5)]}}
    assert render_value(drain["start"], context, "drain.start") == ["spindle-drain-broker", "start", "4,5"]
    assert render_value(drain["done"], context, "drain.done") == ["spindle-drain-broker", "done", "4,5"]
