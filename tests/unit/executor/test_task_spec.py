"""Task data → container spec: valid data maps field by field, bad data names the field."""
import json

import pytest

from spindle_executor.task_spec import InvalidTaskSpec, parse_task_spec

VALID = {"cluster_id": "c1", "member_id": "c1-worker-1", "image": "spindle/base:bookworm", "cpus": 1.5,
         "mem_mb": 512, "cpuset": "0-1", "env": {"A": 1}, "disks": [{"host_path": "/d/1"}, {"host_path": "/d/2"}],
         "network": "spindle-default", "ip": "172.31.200.100", "files": {"/etc/x.conf": "k=v"},
         "health": {"tcp_port": 7077, "timeout_seconds": 60}}


def test_valid_task_data_becomes_a_spec():
    spec = parse_task_spec("t-1", json.dumps(VALID))
    assert spec.mounts == [("/d/1", "/data/1"), ("/d/2", "/data/2")]
    assert spec.env == {"A": "1"} and spec.cpus == 1.5 and spec.mem_mb == 512 and spec.cpuset == "0-1"
    assert spec.health.tcp_port == 7077 and spec.health.timeout_seconds == 60
    assert spec.labels == {"io.spindle.owned": "true", "io.spindle.task-id": "t-1",
                           "io.spindle.member": "c1-worker-1", "io.spindle.cluster": "c1"}
    assert spec.container_name == "spindle-c1-worker-1"


@pytest.mark.parametrize("change,message", [
    ({"cpus": 0}, "cpus: Input should be greater than 0"),
    ({"mem_mb": 2}, "mem_mb: Input should be greater than or equal to 6"),
    ({"image": ""}, "image: String should have at least 1 character"),
    ({"member_id": None}, "member_id: Input should be a valid string"),
    ({"ip": None}, "'network' and 'ip' go together"),
    ({"health": {"timeout_seconds": 3}}, "health: Value error, a health check needs 'command' or 'tcp_port'"),
    ({"disks": [{"host_path": 7}]}, "disks.0.host_path: Input should be a valid string"),
    ({"surprise": 1}, "surprise: Extra inputs are not permitted"),
])
def test_bad_task_data_names_the_problem(change, message):
    with pytest.raises(InvalidTaskSpec, match=message):
        parse_task_spec("t-1", json.dumps({**VALID, **change}))


def test_non_json_is_rejected():
    with pytest.raises(InvalidTaskSpec, match="not JSON"):
        parse_task_spec("t-1", b"\xff not json")
