"""The cassandra 5.0 manifest: launch options → each node's rendered cassandra.yaml and environment —
data_file_directories on every hdd disk, the commit log on the ssd disk when the node got one (else
on the first hdd), hints and saved caches on the first disk, the first three nodes as seeds, every
address the member's IP, the heap half the memory — and the options it refuses."""
from pathlib import Path

import pytest

from spindle_common.catalog import load_catalog, validate_options
from spindle_common.errors import ApiError
from spindle_orchestrator.render import plan_members, render_member

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
CLUSTER = "c0123456789"


@pytest.fixture(scope="module")
def manifest():
    return load_catalog(REPO_CATALOG).get("cassandra", "5.0")


def rendered(manifest, options: dict) -> dict[str, dict]:
    """Each node's rendered container by name, the IPs 10.0.0.1, 10.0.0.2, … in plan order."""
    resolved = validate_options(manifest, options)
    planned = plan_members(CLUSTER, manifest, resolved)
    ips = {m.member_id: f"10.0.0.{i}" for i, m in enumerate(planned, start=1)}
    return {m.name: render_member({"id": CLUSTER}, manifest, resolved, m, ips, planned) for m in planned}


def config(container: dict) -> dict[str, str | list[str]]:
    """The rendered cassandra.yaml's top-level keys: a scalar as its text, a list as its items (the
    seeds line is kept under ``seeds``). The image has its own YAML parser: this is the file's shape."""
    values: dict[str, str | list[str]] = {}
    key = ""
    for line in container["files"]["/etc/cassandra/cassandra.yaml"].splitlines():
        if not line or line.startswith("#"):
            continue
        if line.strip().startswith("- seeds:"):
            values["seeds"] = line.split(":", 1)[1].strip().strip('"')
        elif not line.startswith(" "):
            key, _, value = line.partition(":")
            assert key not in values, f"{key} set twice"
            values[key] = value.strip().strip("'") if value.strip() else []
        elif line.startswith("  - ") and isinstance(values[key], list):
            values[key].append(line[4:])  # type: ignore[union-attr]
    return values


@pytest.mark.parametrize(("options", "nodes", "data_dirs", "commitlog"), [
    ({}, 3, ["/data/1/data"], "/data/1/commitlog"),
    ({"roles": {"node": {"count": 1, "disks": {"hdd": 3}}}}, 1,
     ["/data/1/data", "/data/2/data", "/data/3/data"], "/data/1/commitlog"),
    # the ssd comes after the hdd disks (classes in sorted order): /data/3
    ({"roles": {"node": {"disks": {"hdd": 2, "ssd": 1}}}}, 3, ["/data/1/data", "/data/2/data"], "/data/3/commitlog"),
    ({"roles": {"node": {"count": 5, "disks": {"hdd": 1, "ssd": 1}}}}, 5, ["/data/1/data"], "/data/2/commitlog"),
])
def test_data_on_every_hdd_disk_and_the_commit_log_on_the_ssd(manifest, options, nodes, data_dirs, commitlog):
    members = rendered(manifest, options)
    assert list(members) == [f"node-{i}" for i in range(1, nodes + 1)]
    for index in range(1, nodes + 1):
        yaml = config(members[f"node-{index}"])
        assert yaml["data_file_directories"] == data_dirs
        assert yaml["commitlog_directory"] == commitlog
        assert (yaml["hints_directory"], yaml["saved_caches_directory"], yaml["cdc_raw_directory"]) == \
            ("/data/1/hints", "/data/1/saved_caches", "/data/1/cdc_raw")


@pytest.mark.parametrize(("nodes", "seeds"), [
    (1, ["10.0.0.1"]),
    (2, ["10.0.0.1", "10.0.0.2"]),
    (3, ["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
    (6, ["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
])
def test_the_first_three_nodes_are_the_seeds_and_every_address_is_the_members(manifest, nodes, seeds):
    members = rendered(manifest, {"roles": {"node": {"count": nodes}}})
    every = [f"10.0.0.{i}" for i in range(1, nodes + 1)]
    for index, (name, container) in enumerate(members.items(), start=1):
        ip = f"10.0.0.{index}"
        yaml = config(container)
        assert yaml["seeds"] == ",".join(f"{seed}:7000" for seed in seeds), name
        assert (yaml["listen_address"], yaml["rpc_address"]) == (ip, ip)
        assert (yaml["storage_port"], yaml["native_transport_port"]) == ("7000", "9042")
        assert yaml["cluster_name"] == CLUSTER
        assert yaml["partitioner"] == "org.apache.cassandra.dht.Murmur3Partitioner"
        # Racks from each node's cassandra-rackdc.properties, written by the image's script (SPINDLE_RACK).
        assert yaml["endpoint_snitch"] == "GossipingPropertyFileSnitch"
        # the launcher's view: itself, every node and the seeds (a replacement leaves itself out of those)
        env = container["env"]
        assert (env["CASSANDRA_IP"], env["CASSANDRA_NODES"], env["CASSANDRA_SEEDS"]) == \
            (ip, ",".join(every), ",".join(seeds))
        assert container["command"] == ["cassandra"]
        # Healthy once the cluster's user logs in on CQL there (every client logs in).
        assert container["health"]["command"] == [
            "sh", "-c", 'exec python3 /opt/cassandra/bin/cluster-knows --login "$CASSANDRA_IP"']
        assert (yaml["authenticator"], yaml["authorizer"]) == ("PasswordAuthenticator", "AllowAllAuthorizer")


@pytest.mark.parametrize(("options", "heap", "tokens"), [
    ({}, "1024", "16"),
    ({"roles": {"node": {"mem_mb": 768}}, "settings": {"num_tokens": 4}}, "384", "4"),
    ({"roles": {"node": {"mem_mb": 8192}}, "settings": {"num_tokens": 256}}, "4096", "256"),
])
def test_heap_is_half_the_memory_and_num_tokens_the_setting(manifest, options, heap, tokens):
    node = rendered(manifest, {**options, "roles": {"node": {"count": 1, **options.get("roles", {}).get("node", {})}}})
    container = node["node-1"]
    assert container["env"]["CASSANDRA_HEAP_MB"] == heap
    assert config(container)["num_tokens"] == tokens


def test_nodes_run_as_nobody_on_a_read_only_root_and_are_replaced(manifest):
    role = manifest["roles"]["node"]
    assert role["security"] == {"user": "65534:65534", "read_only_root": True}
    assert role["restart"] == "replace"


@pytest.mark.parametrize("options", [
    {"roles": {"node": {"disks": {"hdd": 0}}}},  # data needs an hdd disk
    {"roles": {"node": {"disks": {"hdd": 1, "ssd": 2}}}},  # one commit log: at most one ssd
    {"roles": {"node": {"disks": {"nvme": 1}}}},
    {"roles": {"node": {"count": 0}}},
    {"roles": {"node": {"mem_mb": 512}}},
    {"roles": {"seed": {"count": 1}}},
    {"settings": {"num_tokens": 0}},
    {"settings": {"num_tokens": 257}},
    {"settings": {"replication_factor": 3}},
])
def test_bad_options_are_refused(manifest, options):
    with pytest.raises(ApiError) as refused:
        validate_options(manifest, options)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_OPTIONS")
