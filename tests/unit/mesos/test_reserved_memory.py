"""The agent offers its machine's memory less what the platform keeps for itself
(``SPINDLE_AGENT_RESERVED_MEM_MB``, default 1024); an explicit ``SPINDLE_AGENT_MEM_MB`` is offered as it is."""
import json

import pytest

from spindle_mesos_embedded.main import DEFAULT_RESERVED_MEM_MB, resource_loader


@pytest.mark.parametrize(("env", "offered"), [
    ({}, 8192 - DEFAULT_RESERVED_MEM_MB),
    ({"SPINDLE_AGENT_RESERVED_MEM_MB": "2048"}, 6144),
    ({"SPINDLE_AGENT_RESERVED_MEM_MB": "0"}, 8192),
    ({"SPINDLE_AGENT_RESERVED_MEM_MB": "9000"}, 0),  # never below nothing
    ({"SPINDLE_AGENT_MEM_MB": "3000"}, 3000),  # a node's own figure: already what it offers
    ({"SPINDLE_AGENT_MEM_MB": "3000", "SPINDLE_AGENT_RESERVED_MEM_MB": "2048"}, 3000),
])
def test_offered_memory_keeps_the_reserve(tmp_path, monkeypatch, env, offered):
    for name in ("SPINDLE_AGENT_MEM_MB", "SPINDLE_AGENT_RESERVED_MEM_MB", "SPINDLE_AGENT_CPUS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    resources = tmp_path / "resources.json"
    resources.write_text(json.dumps([{"name": "cpus", "type": "SCALAR", "scalar": {"value": 4}},
                                     {"name": "mem", "type": "SCALAR", "scalar": {"value": 8192}}]))
    loaded = resource_loader(str(resources), "")()
    assert next(r["scalar"]["value"] for r in loaded if r["name"] == "mem") == offered
    assert next(r["scalar"]["value"] for r in loaded if r["name"] == "cpus") == 4
