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
    assert [(d.host_path, d.container_path) for d in spec.disks] == [("/d/1", "/data/1"), ("/d/2", "/data/2")]
    assert spec.env == {"A": "1"} and spec.cpus == 1.5 and spec.mem_mb == 512 and spec.cpuset == "0-1"
    assert spec.health.tcp_port == 7077 and spec.health.timeout_seconds == 60
    assert spec.labels == {"io.spindle.owned": "true", "io.spindle.task-id": "t-1",
                           "io.spindle.member": "c1-worker-1", "io.spindle.cluster": "c1"}
    assert spec.container_name == "spindle-c1-worker-1"


@pytest.mark.parametrize("change,message", [
    ({"cpus": 0}, "'cpus' must be a positive number"),
    ({"mem_mb": 2}, "'mem_mb' must be an integer"),
    ({"image": ""}, "'image' must be a non-empty str"),
    ({"member_id": None}, "'member_id' must be a non-empty str"),
    ({"ip": None}, "'network' and 'ip' go together"),
    ({"health": {"timeout_seconds": 3}}, "health check needs"),
    ({"disks": [{"host_path": 7}]}, "'host_path' must be a non-empty str"),
])
def test_bad_task_data_names_the_problem(change, message):
    with pytest.raises(InvalidTaskSpec, match=message):
        parse_task_spec("t-1", json.dumps({**VALID, **change}))


def test_non_json_is_rejected():
    with pytest.raises(InvalidTaskSpec, match="not JSON"):
        parse_task_spec("t-1", b"\xff not json")
