"""Properties parsing and cluster/worker argument checks."""

import pytest

from spindle_engine import Cluster, EngineError, Properties, Worker


def test_sizes_and_defaults():
    props = Properties({"executor.memory": "512MB", "executor.instances": 3})
    assert props.bytes("executor.memory") == 512 << 20
    assert props.int("executor.instances") == 3
    assert props["executor.cores"] == "1"
    props["executor.memory"] = "2g"
    assert props.bytes("executor.memory") == 2 << 30
    props["executor.memory"] = "lots"
    with pytest.raises(ValueError, match="executor.memory"):
        props.bytes("executor.memory")


def test_only_local_mode(engine):
    with pytest.raises(EngineError, match="local"):
        Cluster(Properties({"engine.mode": "mesos"}))


def test_unknown_language(cluster):
    with pytest.raises(ValueError, match="python or cpp"):
        Worker(cluster, "cobol")
