"""How the executor turns a task's container spec into Docker's host config (every container:
every capability dropped but those the role keeps, no-new-privileges, pids limit, capped logs;
the role's user and read-only root), where a read-only root's config files go, and how it reads
the mount options of the paths it binds."""
import json

import docker
import pytest

from spindle_executor import container as container_module
from spindle_executor.container import LaunchFailed, _file_binds, hardening
from spindle_executor.mounts import MountPoint, missing_options, mount_of, parse_mountinfo
from spindle_executor.task_spec import parse_task_spec

BASE = {"cluster_id": "c1", "member_id": "c1-server-1", "image": "spindle/base:bookworm", "cpus": 0.5, "mem_mb": 128}
LOGS = {"Type": "json-file", "Config": {"max-size": "10m", "max-file": "3"}}


def host_config(security: dict | None = None, **extra) -> dict:
    data = {**BASE, **extra, **({"security": security} if security is not None else {})}
    spec = parse_task_spec("t-1", json.dumps(data))
    api = docker.APIClient(base_url="unix:///nonexistent.sock", version="1.43")  # builds, never connects
    return api.create_host_config(**hardening(spec))


@pytest.mark.parametrize(("security", "expected"), [
    (None, {"CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"], "PidsLimit": 512, "LogConfig": LOGS,
            "ReadonlyRootfs": False}),
    ({}, {"CapDrop": ["ALL"], "SecurityOpt": ["no-new-privileges"], "PidsLimit": 512, "LogConfig": LOGS,
          "ReadonlyRootfs": False}),
    ({"cap_add": ["CHOWN", "SETUID"]}, {"CapDrop": ["ALL"], "CapAdd": ["CHOWN", "SETUID"], "PidsLimit": 512}),
    ({"pids_limit": 2048}, {"PidsLimit": 2048, "CapDrop": ["ALL"]}),
    ({"user": "65534:65534", "read_only_root": True},
     {"ReadonlyRootfs": True, "Tmpfs": {"/tmp": "rw,exec,nosuid,nodev,mode=1777,size=64m"}, "CapDrop": ["ALL"]}),
])
def test_the_spec_becomes_docker_host_config(security, expected):
    config = host_config(security)
    for key, value in expected.items():
        assert config[key] == value, key
    assert config["Init"] is True  # tini reaps orphans, so zombies never hold the pids limit
    assert "Sysctls" not in config  # no network, no eth0 to tune
    if not (security or {}).get("cap_add"):
        assert "CapAdd" not in config  # nothing kept
    if not (security or {}).get("read_only_root"):
        assert "Tmpfs" not in config


def test_a_container_on_a_network_finds_a_peer_whose_node_died_gone_within_seconds():
    config = host_config(None, network="spindle-c1", ip="10.0.0.5")
    assert config["Sysctls"] == {"net.ipv4.neigh.eth0.base_reachable_time_ms": "5000",
                                 "net.ipv4.neigh.eth0.delay_first_probe_time": "1"}


@pytest.mark.parametrize(("security", "problem"), [
    ({"cap_add": ["SYS_ADMIN"]}, "security.cap_add.0"),
    ({"pids_limit": 0}, "security.pids_limit"),
    ({"pids_limit": 10**6}, "security.pids_limit"),
    ({"user": "root"}, "security.user"),
    ({"privileged": True}, "security.privileged"),
])
def test_task_data_asking_for_more_is_refused(security, problem):
    with pytest.raises(ValueError, match=problem):
        parse_task_spec("t-1", json.dumps({**BASE, "security": security}))


def test_a_read_only_root_gets_its_files_bound_read_only_from_the_sandbox(tmp_path, monkeypatch):
    monkeypatch.setenv("MESOS_SANDBOX", str(tmp_path))
    hardened = []
    monkeypatch.setattr(container_module.mounts, "ensure_folder", lambda path: hardened.append(path) or False)
    spec = parse_task_spec("t-1", json.dumps({**BASE, "files": {"/etc/spindle/index.html": "<h1>hi</h1>"},
                                              "security": {"read_only_root": True}}))
    binds = _file_binds(spec)
    host = tmp_path / "files" / "t-1" / "etc" / "spindle" / "index.html"
    assert binds == [(str(host), "/etc/spindle/index.html", True)]
    assert host.read_text() == "<h1>hi</h1>" and oct(host.stat().st_mode & 0o777) == "0o644"
    assert hardened == [str(tmp_path / "files" / "t-1")]
    writable = parse_task_spec("t-1", json.dumps({**BASE, "files": {"/etc/x": "y"}}))
    assert _file_binds(writable) == []  # a writable root takes them through the archive API


def test_a_config_file_path_climbing_out_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("MESOS_SANDBOX", str(tmp_path))
    spec = parse_task_spec("t-1", json.dumps({**BASE, "files": {"/etc/../../x": "y"},
                                              "security": {"read_only_root": True}}))
    with pytest.raises(LaunchFailed, match="not a plain absolute path"):
        _file_binds(spec)


MOUNTINFO = """\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 7:0 / /var/lib/spindle/disks/disk1 rw,nosuid,nodev,noatime shared:2 - xfs /dev/loop0 rw
31 22 7:4 / /var/lib/spindle/disks/disk5 rw,noatime shared:3 - xfs /dev/loop4 rw
32 22 254:0 /var/lib/spindle/mesos-agent /var/lib/spindle/mesos-agent rw,nosuid,nodev shared:1 - ext4 /dev/vda rw
33 22 254:0 /var/lib/with\\040space /var/lib/with\\040space rw,nosuid,nodev shared:1 - ext4 /dev/vda rw
34 31 7:4 / /var/lib/spindle/disks/disk5 rw,nosuid,nodev,noatime shared:3 - xfs /dev/loop4 rw
"""


@pytest.mark.parametrize(("path", "target", "missing"), [
    ("/var/lib/spindle/disks/disk1", "/var/lib/spindle/disks/disk1", []),
    ("/var/lib/spindle/disks/disk1/work/x", "/var/lib/spindle/disks/disk1", []),
    ("/var/lib/spindle/disks/disk10", "/", ["nosuid", "nodev"]),  # a sibling's prefix is not its mount
    ("/var/lib/spindle/disks/disk5", "/var/lib/spindle/disks/disk5", []),  # the later mount hides the first
    ("/var/lib/spindle/mesos-agent/frameworks/f/executors/e/runs/r/job", "/var/lib/spindle/mesos-agent", []),
    ("/var/lib/spindle/jobs/j1/output", "/", ["nosuid", "nodev"]),
    ("/var/lib/with space/a", "/var/lib/with space", []),
])
def test_the_mount_of_a_path_and_what_it_lacks(path, target, missing):
    mounts = parse_mountinfo(MOUNTINFO)
    assert mount_of(path, mounts).target == target
    assert missing_options(path, mounts) == missing


def test_mountinfo_lines_are_parsed():
    mounts = parse_mountinfo(MOUNTINFO)
    assert mounts[1] == MountPoint("/var/lib/spindle/disks/disk1", frozenset({"rw", "nosuid", "nodev", "noatime"}))
    assert len(mounts) == 6
