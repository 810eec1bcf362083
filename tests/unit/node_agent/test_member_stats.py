"""How a node turns Docker's one-shot statistics of a member and its dedicated disks (use, device
I/O counters) into samples (cgroup v1 and v2 shapes), and how label values are escaped."""
import os

import pytest
from prometheus_client.parser import text_string_to_metric_families

from spindle_node_agent.member_stats import (
    DedicatedDisk,
    dedicated_disks,
    device_bytes,
    line,
    member_lines,
    memory_in_use,
)

LABELS = {"cluster": "c0123456789", "member": "c0123456789-worker-1", "node": "vm"}
V1 = {"cpu_stats": {"cpu_usage": {"total_usage": 2_500_000_000}},
      "memory_stats": {"usage": 300 << 20, "limit": 1 << 30, "stats": {"total_inactive_file": 100 << 20,
                                                                       "cache": 120 << 20}},
      "blkio_stats": {"io_service_bytes_recursive": [
          {"major": 7, "minor": 1, "op": "Read", "value": 4096},
          {"major": 7, "minor": 1, "op": "Write", "value": 8192},
          {"major": 7, "minor": 2, "op": "Write", "value": 1000},
          {"major": 7, "minor": 1, "op": "Total", "value": 13288}]},
      "networks": {"eth0": {"rx_bytes": 10, "tx_bytes": 20}, "eth1": {"rx_bytes": 1, "tx_bytes": 2}}}
V2 = {"cpu_stats": {"cpu_usage": {"total_usage": 1_000_000}},
      "memory_stats": {"usage": 50 << 20, "stats": {"inactive_file": 10 << 20}},
      "blkio_stats": {"io_service_bytes_recursive": [{"major": 7, "minor": 1, "op": "read", "value": 5},
                                                     {"major": 7, "minor": 1, "op": "write", "value": 7}]}}


def parsed(lines: list[str]) -> dict[tuple, float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families("\n".join(lines) + "\n") for s in family.samples}


@pytest.mark.parametrize(("memory", "expected"), [
    (V1["memory_stats"], 200 << 20),
    (V2["memory_stats"], 40 << 20),
    ({"usage": 5}, 5),
    ({}, 0),
    ({"usage": 10, "stats": {"inactive_file": 20}}, 0),  # never negative
])
def test_memory_in_use_leaves_out_the_inactive_page_cache(memory, expected):
    assert memory_in_use(memory) == expected


@pytest.mark.parametrize(("stat", "expected"), [
    ("     120        0     2048       30      400        5    81920     1000        0      900     1030",
     (2048 * 512, 81920 * 512)),
    ("0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", (0, 0)),
])
def test_device_bytes_are_sectors_of_512(stat, expected):
    assert device_bytes(stat) == expected


def test_dedicated_disks_are_read_from_the_host_mount_and_its_device(tmp_path):
    dev = os.stat(tmp_path).st_dev
    sys_root = tmp_path / "sys"
    (sys_root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}").mkdir(parents=True)
    (sys_root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}" / "stat").write_text(
        "1 0 10 0 2 0 20 0 0 0 0\n")
    attrs = {"Mounts": [{"Source": str(tmp_path), "Destination": "/data/2"},
                        {"Source": str(tmp_path), "Destination": "/etc/spindle/x"},  # a config file: not a disk
                        {"Source": str(tmp_path / "gone"), "Destination": "/data/1"}]}  # unmounted meanwhile
    [disk] = dedicated_disks(attrs, str(sys_root))
    assert (disk.target, disk.read, disk.written) == ("/data/2", 10 * 512, 20 * 512)
    assert 0 <= disk.used <= disk.size and disk.size > 0


def test_a_members_samples_with_its_disks():
    samples = parsed(member_lines(V1, LABELS, [DedicatedDisk("/data/1", 1 << 20, 4 << 30, 4096, 8192),
                                               DedicatedDisk("/data/2", 0, 4 << 30, 0, 1000)]))
    key = tuple(sorted(LABELS.items()))
    assert samples[("spindle_member_cpu_seconds_total", key)] == 2.5
    assert samples[("spindle_member_memory_bytes", key)] == 200 << 20
    assert samples[("spindle_member_memory_limit_bytes", key)] == 1 << 30
    assert samples[("spindle_member_network_receive_bytes_total", key)] == 11
    assert samples[("spindle_member_network_transmit_bytes_total", key)] == 22
    disk = tuple(sorted({**LABELS, "disk": "/data/1"}.items()))
    assert samples[("spindle_member_disk_used_bytes", disk)] == 1 << 20
    assert samples[("spindle_member_disk_size_bytes", disk)] == 4 << 30
    assert samples[("spindle_member_disk_read_bytes_total", disk)] == 4096
    assert samples[("spindle_member_disk_written_bytes_total", disk)] == 8192
    second = tuple(sorted({**LABELS, "disk": "/data/2"}.items()))
    assert samples[("spindle_member_disk_written_bytes_total", second)] == 1000


def test_a_member_without_networks_limit_or_disks():
    samples = parsed(member_lines(V2, LABELS))
    names = {name for name, _ in samples}
    assert "spindle_member_memory_limit_bytes" not in names and "spindle_member_disk_used_bytes" not in names
    assert "spindle_member_disk_written_bytes_total" not in names  # no dedicated disk, no disk I/O
    assert samples[("spindle_member_network_receive_bytes_total", tuple(sorted(LABELS.items())))] == 0


def test_label_values_are_escaped():
    rendered = line("m", {"member": 'a"b\\c\nd'}, 1)
    assert rendered == 'm{member="a\\"b\\\\c\\nd"} 1'
    assert parsed([rendered])[("m", (("member", 'a"b\\c\nd'),))] == 1
