"""How a node turns Docker's one-shot statistics of a member into samples (cgroup v1 and v2 shapes),
and how label values are escaped."""
import pytest
from prometheus_client.parser import text_string_to_metric_families

from spindle_node_agent.member_stats import block_io, line, member_lines, memory_in_use

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


@pytest.mark.parametrize(("blkio", "expected"), [
    (V1["blkio_stats"], (4096, 9192)),
    (V2["blkio_stats"], (5, 7)),
    ({"io_service_bytes_recursive": None}, (0, 0)),  # cgroup v2 without io accounting
    ({}, (0, 0)),
])
def test_block_io_sums_reads_and_writes_over_devices(blkio, expected):
    assert block_io(blkio) == expected


def test_a_members_samples_with_its_disks():
    samples = parsed(member_lines(V1, LABELS, [("/data/1", 1 << 20, 4 << 30), ("/data/2", 0, 4 << 30)]))
    key = tuple(sorted(LABELS.items()))
    assert samples[("spindle_member_cpu_seconds_total", key)] == 2.5
    assert samples[("spindle_member_memory_bytes", key)] == 200 << 20
    assert samples[("spindle_member_memory_limit_bytes", key)] == 1 << 30
    assert samples[("spindle_member_disk_read_bytes_total", key)] == 4096
    assert samples[("spindle_member_disk_written_bytes_total", key)] == 9192
    assert samples[("spindle_member_network_receive_bytes_total", key)] == 11
    assert samples[("spindle_member_network_transmit_bytes_total", key)] == 22
    disk = tuple(sorted({**LABELS, "disk": "/data/1"}.items()))
    assert samples[("spindle_member_disk_used_bytes", disk)] == 1 << 20
    assert samples[("spindle_member_disk_size_bytes", disk)] == 4 << 30


def test_a_member_without_networks_limit_or_disks():
    samples = parsed(member_lines(V2, LABELS))
    names = {name for name, _ in samples}
    assert "spindle_member_memory_limit_bytes" not in names and "spindle_member_disk_used_bytes" not in names
    assert samples[("spindle_member_network_receive_bytes_total", tuple(sorted(LABELS.items())))] == 0


def test_label_values_are_escaped():
    rendered = line("m", {"member": 'a"b\\c\nd'}, 1)
    assert rendered == 'm{member="a\\"b\\\\c\\nd"} 1'
    assert parsed([rendered])[("m", (("member", 'a"b\\c\nd'),))] == 1
