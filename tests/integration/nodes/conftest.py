"""The three simulated nodes every test here runs on (deploy/node), made once for the run: these tests
run last (tests/conftest.py), as adding the nodes stops this machine's Mesos agent and restarts the
orchestrator until the nodes go. Each node offers 2 cpus and 6 GiB (shared by all three on this
machine's cores and memory), has NODE_HDDS hdds (HDFS with HA puts a NameNode, a journal member and a
DataNode on one node, a disk each), and holds the images of the products run on the nodes."""
from collections.abc import Iterator

import pytest

from tests.support.nodes import IMAGES, NODE_HDDS, NODES, simulated_nodes


@pytest.fixture(scope="session")
def nodes(platform_env) -> Iterator[dict]:
    with simulated_nodes(NODES, disks=f"{NODE_HDDS}:hdd", cpus="2", mem_mb="6144", images=IMAGES):
        yield {"token": platform_env["SPINDLE_INTERNAL_TOKEN"]}
