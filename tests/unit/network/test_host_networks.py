"""Which host networks a new pool must not shadow: a macvlan pool's parent segment is not one."""
import json
import subprocess
from types import SimpleNamespace

import pytest

from spindle_network import host_networks as module

ROUTES = [{"dst": "default", "gateway": "10.0.0.1", "dev": "eth0"},
          {"dst": "10.0.0.0/24", "dev": "eth0"},
          {"dst": "172.31.250.0/24", "dev": "spdl-fabric"},
          {"dst": "172.31.200.0/24", "dev": "br-1234"}]
ADDRS = [{"ifname": "eth0", "addr_info": [{"local": "10.0.0.5", "prefixlen": 24}]},
         {"ifname": "spdl-fabric", "addr_info": [{"local": "172.31.250.1", "prefixlen": 24}]}]


@pytest.fixture
def fake_ip(monkeypatch):
    def run(command, **_):
        return SimpleNamespace(stdout=json.dumps(ROUTES if "route" in command else ADDRS))
    monkeypatch.setattr(subprocess, "run", run)


@pytest.mark.parametrize(("own", "segment", "expected"), [
    (set(), None, ["10.0.0.0/24", "172.31.200.0/24", "172.31.250.0/24"]),
    ({"172.31.200.0/24"}, None, ["10.0.0.0/24", "172.31.250.0/24"]),  # a pool's own bridge
    ({"172.31.200.0/24"}, "spdl-fabric", ["10.0.0.0/24"]),             # the macvlan pool's own segment
    (set(), "eth9", ["10.0.0.0/24", "172.31.200.0/24", "172.31.250.0/24"]),  # an unknown parent hides nothing
])
def test_host_networks(fake_ip, own, segment, expected):
    assert [str(n) for n in module.host_networks(own, segment)] == expected
