"""The node agent against the real disk-service and network-service code on a fresh database (both
served by uvicorn on loopback, no lifespan: nothing registers in Consul), real loop devices, real
mounts and the real dockerd, as the disk and network integration tests do."""
import subprocess
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from spindle_common.migrations import upgrade
from spindle_disk.core.config import Settings as DiskSettings
from spindle_disk.main import build_app as build_disk_app
from spindle_network.core.config import Settings as NetworkSettings
from spindle_network.main import build_app as build_network_app
from spindle_node_agent.config import Settings as AgentSettings
from tests.support.internal import internal_headers
from tests.support.live_server import serve
from tests.support.loop_disks import loop_disk as real_loop_disk
from tests.support.loop_disks import sh

TOKEN = "node-agent-tests-token"
ADMIN = internal_headers(TOKEN, "test-admin", "admin")
SERVICE = internal_headers(TOKEN, "scheduler", "service")
# Not one of disk-service's local_node_addresses: the service leaves this node's wipes to its agent.
NODE_ADDRESS = "10.254.77.7"


@pytest.fixture
def services(fresh_database, consul_url):
    """disk-service and network-service, real code, one scratch database (each in its own schema)."""
    upgrade("spindle_disk", fresh_database)
    upgrade("spindle_network", fresh_database)
    disk_app = build_disk_app(DiskSettings(database_url=fresh_database, internal_token=TOKEN))
    network_app = build_network_app(NetworkSettings(database_url=fresh_database, internal_token=TOKEN,
                                                    consul_url=consul_url))
    try:
        with serve(disk_app) as disk_url, serve(network_app) as network_url:
            yield SimpleNamespace(disk=disk_url, network=network_url)
    finally:
        disk_app.state.wiper.shutdown()


@pytest.fixture
def node_name() -> str:
    return f"na-test-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def disk_root(tmp_path) -> str:
    """This test's node's disk root: no other disk of this machine is mounted below it."""
    root = tmp_path / "disks"
    root.mkdir()
    return str(root)


@pytest.fixture
def loop_disk(tmp_path, disk_root):
    """A 512 MiB sparse file on a direct-I/O loop device with XFS labelled spdl-…, mounted below the
    node's disk root."""
    with real_loop_disk(tmp_path / "node.img", Path(disk_root) / "disk1") as disk:
        yield disk


@pytest.fixture
def agent_settings(services, node_name, disk_root):
    def make(**overrides) -> AgentSettings:
        values = {"node_name": node_name, "node_address": NODE_ADDRESS, "node_disk_root": disk_root,
                  "disk_service_url": services.disk, "network_service_url": services.network,
                  "internal_token": TOKEN, **overrides}
        return AgentSettings(**values)

    return make


@pytest.fixture
def veth():
    """A veth pair (this kernel has no dummy links) whose first end can be a macvlan parent; yields a factory."""
    made: list[str] = []

    def make() -> str:
        name = f"spdl{uuid.uuid4().hex[:6]}"
        sh("ip", "link", "add", name, "type", "veth", "peer", "name", f"{name}p")
        made.append(name)
        sh("ip", "link", "set", name, "up")
        sh("ip", "link", "set", f"{name}p", "up")
        return name

    yield make
    for name in made:
        subprocess.run(["ip", "link", "del", name], capture_output=True)
