"""``spindle top``: each member's latest figures from the API's series, in short units."""
import pytest

from spindle_client import models
from spindle_client.top_commands import human, top_rows


@pytest.mark.parametrize(("size", "text"), [(0, "0B"), (512, "512B"), (1536, "1.5K"), (20 << 20, "20.0M"),
                                            (150 << 20, "150M"), (int(3.2 * (1 << 30)), "3.2G"), (5 << 40, "5.0T")])
def test_human_sizes(size, text):
    assert human(size) == text


def series(figure, unit, member, points, disk=None):
    return {"figure": figure, "unit": unit, "member": member, "disk": disk, "points": points}


def test_the_latest_point_of_each_figure_per_member():
    metrics = models.ClusterMetrics.model_validate({
        "cluster_id": "c0123456789", "start": "2026-11-25T15:00:00Z", "end": "2026-11-25T15:05:00Z",
        "step_seconds": 15, "series": [
            series("cpu", "cores", "c1-worker-2", [[1, 0.1], [2, 0.75]]),
            series("cpu", "cores", "c1-worker-1", [[2, 1.5]]),
            series("memory", "bytes", "c1-worker-1", [[2, 300 << 20]]),
            series("memory_limit", "bytes", "c1-worker-1", [[2, 1 << 30]]),
            series("disk_write", "bytes/s", "c1-worker-1", [[2, 2 << 20]]),
            series("network_receive", "bytes/s", "c1-worker-1", [[2, 1024]]),
            series("disk_used", "bytes", "c1-worker-1", [[2, 1 << 30]], disk="/data/1"),
            series("disk_size", "bytes", "c1-worker-1", [[2, 4 << 30]], disk="/data/1"),
            series("memory", "bytes", "c1-worker-3", []),  # no point yet: no row
        ]})
    assert top_rows(metrics) == [
        ("c1-worker-1", "1.50", "300M/1.0G", "0B/2.0M", "1.0K/0B", "/data/1:1.0G/4.0G"),
        ("c1-worker-2", "0.75", "0B", "0B/0B", "0B/0B", "-"),
    ]
