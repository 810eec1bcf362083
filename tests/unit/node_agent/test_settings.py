"""spindle-node-agent's settings from the environment: what is required, defaults, what is refused."""
import pytest
from pydantic import ValidationError

from spindle_node_agent.config import Settings

REQUIRED = {"SPINDLE_NODE_NAME": "node-1", "SPINDLE_NODE_ADDRESS": "10.77.0.11"}
ALL = ("NODE_NAME", "NODE_ADDRESS", "NODE_DISK_ROOT", "DISK_SERVICE_URL", "NETWORK_SERVICE_URL", "INTERNAL_TOKEN",
       "NODE_FABRIC_IFACE", "NODE_AGENT_INTERVAL_S", "NODE_DISCOVERY_INTERVAL_S", "NODE_WIPE_TIMEOUT_S", "LOG_LEVEL",
       "NODE_CPUS", "NODE_MEM_MB", "NODE_DISK_CLASSES")


@pytest.fixture
def env(monkeypatch):
    for name in ALL:
        monkeypatch.delenv(f"SPINDLE_{name}", raising=False)

    def set_env(values):
        for key, value in values.items():
            monkeypatch.setenv(key, value)
        return Settings()

    return set_env


def test_defaults(env):
    s = env(REQUIRED)
    assert (s.node_name, s.node_address, s.node_disk_root, s.disk_service_url, s.network_service_url,
            s.node_fabric_iface, s.node_agent_interval_s, s.node_discovery_interval_s) == (
        "node-1", "10.77.0.11", "/var/lib/spindle/disks", "http://127.0.0.1:8083", "http://127.0.0.1:8084",
        "fab0", 2.0, 30.0)
    assert (s.node_cpus, s.node_mem_mb, s.node_disk_classes) == (None, None, {})
    assert s.actor == "node-agent/node-1"


def test_every_setting_is_read(env):
    s = env({**REQUIRED, "SPINDLE_NODE_DISK_ROOT": "/srv/node-1/disks/", "SPINDLE_DISK_SERVICE_URL": "http://10.77.0.1:8083",
             "SPINDLE_NETWORK_SERVICE_URL": "http://10.77.0.1:8084", "SPINDLE_INTERNAL_TOKEN": "secret",
             "SPINDLE_NODE_FABRIC_IFACE": "fab1", "SPINDLE_NODE_AGENT_INTERVAL_S": "0.5"})
    assert (s.node_disk_root, s.disk_service_url, s.network_service_url, s.internal_token, s.node_fabric_iface,
            s.node_agent_interval_s) == ("/srv/node-1/disks", "http://10.77.0.1:8083", "http://10.77.0.1:8084",
                                         "secret", "fab1", 0.5)


def test_resources_and_disk_classes_as_deploy_node_passes_them(env):
    s = env({**REQUIRED, "SPINDLE_NODE_CPUS": "2", "SPINDLE_NODE_MEM_MB": "4096",
             "SPINDLE_NODE_DISK_CLASSES": '{"spdl-node-1-1": "hdd","spdl-node-1-2": "ssd"}'})
    assert (s.node_cpus, s.node_mem_mb, s.node_disk_classes) == (2.0, 4096,
                                                                 {"spdl-node-1-1": "hdd", "spdl-node-1-2": "ssd"})


@pytest.mark.parametrize("values,field", [
    ({"SPINDLE_NODE_ADDRESS": "10.77.0.11"}, "node_name"),  # required
    ({"SPINDLE_NODE_NAME": "node-1"}, "node_address"),  # required
    ({**REQUIRED, "SPINDLE_NODE_NAME": "node 1"}, "node_name"),
    ({**REQUIRED, "SPINDLE_NODE_NAME": "node/1"}, "node_name"),  # it goes into URL paths
    ({**REQUIRED, "SPINDLE_NODE_ADDRESS": "127.0.0.1"}, "node_address"),  # disk-service would wipe too
    ({**REQUIRED, "SPINDLE_NODE_ADDRESS": "::1"}, "node_address"),
    ({**REQUIRED, "SPINDLE_NODE_ADDRESS": "localhost"}, "node_address"),
    ({**REQUIRED, "SPINDLE_NODE_DISK_ROOT": "relative/disks"}, "node_disk_root"),
    ({**REQUIRED, "SPINDLE_NODE_DISK_ROOT": "/"}, "node_disk_root"),
    ({**REQUIRED, "SPINDLE_NODE_FABRIC_IFACE": "a-name-far-too-long"}, "node_fabric_iface"),  # > 15 (IFNAMSIZ)
    ({**REQUIRED, "SPINDLE_NODE_FABRIC_IFACE": "fab0;rm"}, "node_fabric_iface"),
    ({**REQUIRED, "SPINDLE_NODE_AGENT_INTERVAL_S": "0"}, "node_agent_interval_s"),
    ({**REQUIRED, "SPINDLE_NODE_AGENT_INTERVAL_S": "soon"}, "node_agent_interval_s"),
    ({**REQUIRED, "SPINDLE_NODE_CPUS": "0"}, "node_cpus"),
    ({**REQUIRED, "SPINDLE_NODE_DISK_CLASSES": '{"spdl-1": "tape"}'}, "node_disk_classes"),
])
def test_bad_settings_are_refused_naming_the_setting(env, values, field):
    with pytest.raises(ValidationError) as failed:
        env(values)
    assert [e["loc"][0] for e in failed.value.errors()] == [field]


def test_a_fabric_address_that_is_a_name_is_fine(env):
    assert env({**REQUIRED, "SPINDLE_NODE_ADDRESS": "node-1.fabric"}).node_address == "node-1.fabric"
