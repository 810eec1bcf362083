"""spindle-node-agent's iteration against the real disk-service and network-service: its node is
registered and its own disk (only that one) discovered, a released disk is wiped on the node and
reported free, the heartbeat shows as last_seen_at, and a macvlan pool's network is made on the
node's dockerd on the node's fabric interface."""
import json
import uuid
from datetime import UTC, datetime, timedelta

import docker
import httpx

from spindle_node_agent.agent import NodeAgent
from tests.integration.node_agent.conftest import ADMIN, NODE_ADDRESS, SERVICE
from tests.support.loop_disks import sh

# Not used by other tests' pools (network tests: 172.31.204.0/22, .208-.213, .216.0/21).
POOL_CIDR = "172.31.236.0/24"


def aware(timestamp: str) -> datetime:
    assert timestamp.endswith("Z"), timestamp  # RFC 3339 in UTC, as every Spindle timestamp
    parsed = datetime.fromisoformat(timestamp)
    assert parsed.tzinfo is not None
    return parsed


def test_the_agent_registers_discovers_heartbeats_and_wipes_its_nodes_disk(services, agent_settings, node_name,
                                                                            loop_disk):
    disk_service = httpx.Client(base_url=services.disk, timeout=30)
    agent = NodeAgent(agent_settings())
    try:
        first = agent.run_once()
        assert first.errors == {} and first.registered and first.heartbeat and first.discovered

        node = disk_service.get(f"/nodes/{node_name}", headers=ADMIN).json()
        assert (node["address"], node["disk_root"]) == (NODE_ADDRESS, loop_disk["root"])
        seen = aware(node["last_seen_at"])
        assert aware(node["created_at"]) <= seen and abs(datetime.now(UTC) - seen) < timedelta(minutes=5)
        # The whole machine's lsblk was posted; of every spdl-… disk on it, only ours is below this node's root.
        (disk,) = disk_service.get("/disks", params={"node": node_name}, headers=ADMIN).json()["items"]
        assert (disk["device_path"], disk["mount_point"], disk["fs_label"], disk["fs_type"], disk["state"]) == (
            loop_disk["device"], loop_disk["mount"], loop_disk["label"], "xfs", "free")

        owner = f"na-test/{uuid.uuid4().hex[:6]}"
        allocated = disk_service.post("/allocations", json={"node": node_name, "disk_class": disk["disk_class"],
                                                            "count": 1, "owner": owner}, headers=SERVICE)
        assert allocated.status_code == 201 and allocated.json()["disks"][0]["id"] == disk["id"], allocated.text
        with open(f"{loop_disk['mount']}/owner-data.bin", "wb") as f:
            f.write(b"x" * (8 << 20))
        sh("sync")
        released = disk_service.post("/allocations/release", json={"owner": owner}, headers=SERVICE)
        assert released.status_code == 200 and released.json()[0]["state"] == "wiping", released.text
        # disk-service leaves a remote node's wipe to the node: nothing happens until the agent runs.
        assert disk_service.get(f"/disks/{disk['id']}", headers=ADMIN).json()["state"] == "wiping"
        assert sh("ls", "-A", loop_disk["mount"]) == "owner-data.bin"

        second = agent.run_once()
        assert second.errors == {} and second.wiped == {disk["id"]: None} and not second.discovered
        after = disk_service.get(f"/disks/{disk['id']}", headers=ADMIN).json()
        assert (after["state"], after["state_reason"], after["owner"]) == ("free", None, None)
        assert sh("ls", "-A", loop_disk["mount"]) == ""  # a fresh filesystem: the owner's file is gone
        mounted = json.loads(sh("findmnt", "--json", "-o", "SOURCE,FSTYPE,LABEL", loop_disk["mount"]))["filesystems"]
        assert mounted == [{"source": loop_disk["device"], "fstype": "xfs", "label": loop_disk["label"]}]
        log = disk_service.get(f"/disks/{disk['id']}/transitions", headers=ADMIN).json()
        assert [(t["from_state"], t["to_state"], t["actor"]) for t in log][-3:] == [
            ("free", "allocated", "scheduler"), ("allocated", "wiping", "scheduler"),
            ("wiping", "free", f"node-agent/{node_name}")]

        later = disk_service.get("/nodes", headers=ADMIN).json()
        assert [n["name"] for n in later] == [node_name] and aware(later[0]["last_seen_at"]) >= seen
        assert third_iteration_is_quiet(agent)
    finally:
        agent.close()
        disk_service.close()


def third_iteration_is_quiet(agent: NodeAgent) -> bool:
    """Nothing left to do: no error, nothing wiped, nothing created."""
    it = agent.run_once()
    return it.errors == {} and it.wiped == {} and it.networks_created == []


def test_a_heartbeat_for_an_unknown_node_is_404_and_one_without_a_body_counts(services, node_name):
    disk_service = httpx.Client(base_url=services.disk, timeout=30)
    try:
        missing = disk_service.post("/nodes/no-such-node/heartbeat", json={"agent_version": "0.1.0"}, headers=ADMIN)
        assert missing.status_code == 404
        error = missing.json()["error"]
        assert (error["code"], error["details"]) == ("NODE_NOT_FOUND", {"node": "no-such-node"})
        created = disk_service.post("/nodes", json={"name": node_name, "address": NODE_ADDRESS, "disk_root": "/srv/x"},
                                    headers=ADMIN).json()
        assert created["last_seen_at"] is None
        beat = disk_service.post(f"/nodes/{node_name}/heartbeat", headers=SERVICE)
        assert beat.status_code == 200 and aware(beat.json()["last_seen_at"]) >= aware(created["created_at"])
    finally:
        disk_service.close()


def test_a_macvlan_pool_gets_its_network_on_the_nodes_dockerd_with_the_nodes_fabric_parent(services, agent_settings,
                                                                                          veth):
    control_plane_parent, node_fabric = veth(), veth()
    name = f"na{uuid.uuid4().hex[:6]}"
    admin = httpx.Client(base_url=services.network, headers=ADMIN, timeout=30)
    client = docker.from_env()
    agent = NodeAgent(agent_settings(node_fabric_iface=node_fabric))
    try:
        created = admin.post("/pools", json={"name": name, "cidr": POOL_CIDR, "driver": "macvlan",
                                             "parent": control_plane_parent})
        assert created.status_code == 201, created.text
        pool = created.json()
        # This test's node shares the control plane's dockerd: take the pool's network away, as on a
        # node that never had it.
        client.networks.get(pool["docker_network"]).remove()

        it = agent.run_once()
        assert it.networks_created == [pool["docker_network"]] and "networks" not in it.errors, it.errors
        network = client.networks.get(pool["docker_network"])
        assert (network.attrs["Driver"], network.attrs["Options"]["parent"]) == ("macvlan", node_fabric)
        assert network.attrs["IPAM"]["Config"][0] == {"Subnet": pool["cidr"], "Gateway": pool["gateway"],
                                                      "IPRange": pool["auto_cidr"]}
        assert network.attrs["Labels"] == {"io.spindle.owned": "true", "io.spindle.pool": name}
        assert agent.run_once().networks_created == []  # there now: adopted, not made again
    finally:
        agent.close()
        try:
            client.networks.get(f"spindle-{name}").remove()
        except docker.errors.NotFound:
            pass
        client.close()
        admin.close()


def test_a_pool_whose_network_the_node_cannot_make_is_reported_and_not_fatal(services, agent_settings, veth):
    name = f"na{uuid.uuid4().hex[:6]}"
    admin = httpx.Client(base_url=services.network, headers=ADMIN, timeout=30)
    client = docker.from_env()
    agent = NodeAgent(agent_settings(node_fabric_iface=f"spdl{uuid.uuid4().hex[:6]}"))  # no such interface
    try:
        pool = admin.post("/pools", json={"name": name, "cidr": POOL_CIDR, "driver": "macvlan",
                                          "parent": veth()}).json()
        client.networks.get(pool["docker_network"]).remove()
        it = agent.run_once()
        assert it.registered and it.heartbeat and it.networks_created == []
        assert f"network {pool['docker_network']}" in it.errors and "networks" not in it.errors, it.errors
    finally:
        agent.close()
        try:
            client.networks.get(f"spindle-{name}").remove()
        except docker.errors.NotFound:
            pass
        client.close()
        admin.close()
