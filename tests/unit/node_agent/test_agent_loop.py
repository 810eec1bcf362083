"""One iteration of the node agent against stand-ins for disk-service, network-service and dockerd
(no real service, no device touched): which calls it makes, and that no failure stops the others."""
from types import SimpleNamespace

import pytest
from docker.errors import APIError, NotFound

from spindle_common.errors import ApiError
from spindle_node_agent import agent as agent_module
from spindle_node_agent.agent import NodeAgent
from spindle_node_agent.config import Settings

SETTINGS = Settings(node_name="n1", node_address="10.77.0.11", node_disk_root="/srv/n1/disks")
NODE = {"id": 1, "name": "n1", "address": "10.77.0.11", "disk_root": "/srv/n1/disks", "cpus": None, "mem_mb": None}
UNAVAILABLE = ApiError(503, "SERVICE_UNAVAILABLE", "http://10.77.0.1:8083 is unreachable: connection refused")


class FakeDiskService:
    def __init__(self, wiping=(), fail=None, registered=None):
        self.calls: list[tuple[str, str, object]] = []
        self.wiping = list(wiping)
        self.fail = fail or {}  # (method, path) -> ApiError to raise
        self.registered = registered

    def request(self, method, path, json=None, **_):
        self.calls.append((method, path, json))
        if (method, path) in self.fail:
            raise self.fail[(method, path)]
        if (method, path) == ("POST", "/nodes"):
            if self.registered is not None:
                raise ApiError(409, "NODE_EXISTS", "node 'n1' is registered with other attributes")
            return {**NODE, **json}
        if (method, path) == ("GET", "/nodes/n1"):
            return self.registered
        if path.endswith("/discover"):
            return {"registered": [], "updated": [], "ignored": []}
        return {}

    def disks(self, **filters):
        self.calls.append(("LIST", "/disks", filters))
        if ("GET", "/disks") in self.fail:
            raise self.fail[("GET", "/disks")]
        return self.wiping

    def close(self):
        pass


class FakePools:
    def __init__(self, pools, fail=None):
        self.pools, self.fail = pools, fail

    def request(self, method, path, **_):
        if self.fail:
            raise self.fail
        assert (method, path) == ("GET", "/pools")
        return self.pools

    def close(self):
        pass


class FakeDocker:
    """The slice of docker.DockerClient that ensure_network uses."""

    def __init__(self, existing=(), refuse=(), stopped=()):
        self.existing = {name: {"Labels": labels, "IPAM": {"Config": [{"Subnet": subnet}]}}
                         for name, labels, subnet in existing}
        self.refuse = set(refuse)
        self.created: list[dict] = []
        self.networks = self
        self.api = FakeDockerApi(list(stopped))

    def list(self):
        return [SimpleNamespace(name=n) for n in self.existing]

    def get(self, name):
        if name not in self.existing:
            raise NotFound(f"network {name} not found")
        return SimpleNamespace(attrs=self.existing[name])

    def create(self, name, driver, ipam, options, labels):
        if name in self.refuse:
            raise APIError("refused", explanation="-o parent interface was not found on the host: fab0")
        self.created.append({"name": name, "driver": driver, "options": options,
                             "ipam": ipam["Config"][0], "labels": labels})
        self.existing[name] = {"Labels": labels, "IPAM": {"Config": [{"Subnet": ipam["Config"][0]["Subnet"]}]}}

    def close(self):
        pass


class FakeDockerApi:
    """The slice of the low-level API the stale-container step uses: stopped containers by inspect answer."""

    def __init__(self, stopped: list[dict]):
        self.stopped = {c["Id"]: c for c in stopped}
        self.removed: list[str] = []

    def containers(self, all, filters):
        assert all and filters == {"label": "io.spindle.cluster", "status": "exited"}
        return [{"Id": cid} for cid in self.stopped]

    def inspect_container(self, cid):
        return self.stopped[cid]

    def remove_container(self, cid, force):
        self.removed.append(cid)
        del self.stopped[cid]


def pool(name, n, driver="macvlan"):
    return {"name": name, "cidr": f"10.88.{n}.0/24", "gateway": f"10.88.{n}.1", "floating_cidr": f"10.88.{n}.128/25",
            "auto_cidr": f"10.88.{n}.0/25", "driver": driver, "parent": "veth-cp" if driver == "macvlan" else None,
            "docker_network": f"spindle-{name}", "floating_total": 127, "floating_used": 0}


def wiping(id_, node="n1"):
    return {"id": id_, "node": node, "state": "wiping", "device_path": f"/dev/loop{id_}",
            "mount_point": f"/srv/{node}/disks/disk{id_}", "fs_type": "xfs", "fs_label": f"spdl-{id_}"}


@pytest.fixture(autouse=True)
def wiped(monkeypatch):
    """Stand-ins for lsblk and the wipe itself: records what would be wiped, fails where told. For
    every test here: with the real lsblk, an iteration mounts the unmounted Spindle disks it finds
    under SETTINGS' disk root (once, while `make unit` ran beside a node being added, it mounted
    that node's new disks at /srv/n1/disks)."""
    done: list[tuple] = []
    failures: dict[str, str] = {}

    def fake_wipe(device, mount, fs_type, label, disk_root, timeout):
        done.append((device, mount, fs_type, label, disk_root))
        return failures.get(device)

    monkeypatch.setattr(agent_module, "wipe_device", fake_wipe)
    monkeypatch.setattr(agent_module.blockdev, "lsblk", lambda *a, **k: {"blockdevices": [{"name": "vda"}]})
    return SimpleNamespace(done=done, failures=failures)


def make(disks=None, pools=(), docker=None, clock=None):
    return NodeAgent(SETTINGS, disks=disks or FakeDiskService(), network=FakePools(list(pools)),
                     docker_client=lambda: docker or FakeDocker(), clock=clock or (lambda: 0.0))


def test_first_iteration_registers_heartbeats_discovers_and_wipes_this_nodes_disks(wiped):
    disks = FakeDiskService(wiping=[wiping(2), wiping(1), wiping(9, node="n2")])
    wiped.failures["/dev/loop2"] = "umount /srv/n1/disks/disk2 exited 32: target is busy"
    it = make(disks).run_once()
    assert it.errors == {} and it.registered and it.heartbeat and it.discovered
    assert it.wiped == {1: None, 2: "umount /srv/n1/disks/disk2 exited 32: target is busy"}
    assert [d[0] for d in wiped.done] == ["/dev/loop1", "/dev/loop2"]
    assert wiped.done[0] == ("/dev/loop1", "/srv/n1/disks/disk1", "xfs", "spdl-1", "/srv/n1/disks")
    assert disks.calls == [
        ("POST", "/nodes", {"name": "n1", "address": "10.77.0.11", "disk_root": "/srv/n1/disks"}),
        ("POST", "/nodes/n1/heartbeat", {"agent_version": agent_module.__version__}),
        ("POST", "/nodes/n1/discover", {"lsblk": {"blockdevices": [{"name": "vda"}]}}),
        ("LIST", "/disks", {"node": "n1", "state": "wiping"}),
        ("POST", "/disks/1/wipe-result", {"ok": True}),
        ("POST", "/disks/2/wipe-result", {"ok": False, "reason": "wipe failed: umount /srv/n1/disks/disk2 exited "
                                                                 "32: target is busy"}),
    ]


def test_later_iterations_discover_only_every_interval_and_register_once(wiped):
    now = [0.0]
    disks = FakeDiskService()
    agent = make(disks, clock=lambda: now[0])
    discovered = []
    for t in (0.0, 2.0, 29.0, 30.0, 32.0, 61.0):
        now[0] = t
        discovered.append(agent.run_once().discovered)
    assert discovered == [True, False, False, True, False, True]
    assert [c[1] for c in disks.calls].count("/nodes") == 1
    assert [c[1] for c in disks.calls].count("/nodes/n1/heartbeat") == 6


def test_an_existing_node_of_the_same_name_is_fine_unless_it_is_another_one(wiped):
    same = FakeDiskService(registered={**NODE, "cpus": 8.0}, wiping=[wiping(1)])
    it = make(same).run_once()
    assert it.registered and it.errors == {} and it.wiped == {1: None}
    other = FakeDiskService(registered={**NODE, "disk_root": "/srv/elsewhere"}, wiping=[wiping(1)])
    it = make(other).run_once()
    assert not it.registered and it.wiped == {} and "disk_root '/srv/elsewhere'" in it.errors["register"]
    assert [c[1] for c in other.calls] == ["/nodes", "/nodes/n1"]  # no heartbeat, discovery or wipe


def test_transient_errors_are_reported_and_the_next_iteration_tries_again(wiped):
    disks = FakeDiskService(fail={("POST", "/nodes"): UNAVAILABLE})
    agent = make(disks)
    assert agent.run_once().errors == {"register": "503 SERVICE_UNAVAILABLE: http://10.77.0.1:8083 is unreachable: "
                                                   "connection refused"}
    disks.fail = {("POST", "/nodes/n1/heartbeat"): UNAVAILABLE, ("POST", "/nodes/n1/discover"): UNAVAILABLE}
    disks.wiping = [wiping(1)]
    it = agent.run_once()
    assert it.registered and set(it.errors) == {"heartbeat", "discover"} and it.wiped == {1: None}
    disks.fail = {}
    it = agent.run_once()
    assert it.errors == {} and it.heartbeat and it.discovered  # discovery failed last time: still due


def test_a_lost_wipe_report_leaves_the_disk_wiping_for_the_next_iteration(wiped):
    disks = FakeDiskService(wiping=[wiping(1), wiping(2)], fail={("POST", "/disks/1/wipe-result"): UNAVAILABLE})
    it = make(disks).run_once()
    assert it.wiped == {2: None} and set(it.errors) == {"wipe 1"}
    assert [d[0] for d in wiped.done] == ["/dev/loop1", "/dev/loop2"]


def test_macvlan_pools_get_their_network_on_the_nodes_dockerd_and_bridge_pools_do_not(wiped):
    docker = FakeDocker(existing=[("spindle-old", {"io.spindle.pool": "old"}, "10.88.4.0/24")])
    agent = make(pools=[pool("mv", 1), pool("default", 2, driver="bridge"), pool("old", 4)], docker=docker)
    it = agent.run_once()
    assert it.errors == {} and it.networks_created == ["spindle-mv"]
    (created,) = docker.created
    assert created == {"name": "spindle-mv", "driver": "macvlan", "options": {"parent": "fab0"},
                       "ipam": {"Subnet": "10.88.1.0/24", "Gateway": "10.88.1.1", "IPRange": "10.88.1.0/25",
                                "AuxiliaryAddresses": None},
                       "labels": {"io.spindle.owned": "true", "io.spindle.pool": "mv"}}
    assert agent.run_once().networks_created == [] and len(docker.created) == 1  # idempotent


def test_one_pools_failure_is_logged_and_the_other_pools_still_get_theirs(wiped, caplog):
    docker = FakeDocker(existing=[("spindle-taken", {"io.spindle.pool": "someone-else"}, "10.88.3.0/24")],
                        refuse=["spindle-broken"])
    agent = make(pools=[pool("broken", 1), pool("taken", 3), pool("mv", 2)], docker=docker)
    it = agent.run_once()
    assert it.networks_created == ["spindle-mv"]
    assert "Docker refused network spindle-broken" in it.errors["network spindle-broken"]
    assert "DOCKER_NETWORK_EXISTS" in it.errors["network spindle-taken"]
    agent.run_once()  # the same problems again: logged once while they last
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2 and all(w.startswith("pool ") for w in warnings)


def test_network_service_or_dockerd_down_does_not_stop_the_disk_work(wiped):
    disks = FakeDiskService(wiping=[wiping(1)])
    agent = NodeAgent(SETTINGS, disks=disks, network=FakePools([], fail=UNAVAILABLE), docker_client=FakeDocker)
    it = agent.run_once()
    assert set(it.errors) == {"networks"} and it.wiped == {1: None}

    def no_dockerd():
        raise agent_module.DockerException("Error while fetching server API version: connection refused")

    agent = NodeAgent(SETTINGS, disks=FakeDiskService(), network=FakePools([pool("mv", 1)]), docker_client=no_dockerd)
    assert agent.run_once().errors["networks"].startswith("DockerException: Error while fetching")


def test_configured_resources_are_registered_and_classes_sent_for_new_disks_only(wiped):
    settings = SETTINGS.model_copy(update={"node_cpus": 2.0, "node_mem_mb": 4096,
                                           "node_disk_classes": {"spdl-n1-1": "ssd", "spdl-n1-2": "hdd"}})
    disks = FakeDiskService(wiping=[wiping(1) | {"state": "free", "fs_label": "spdl-n1-1"}])
    agent = NodeAgent(settings, disks=disks, network=FakePools([]), docker_client=FakeDocker, clock=lambda: 0.0)
    assert agent.run_once().errors == {}
    register, discover = disks.calls[0], next(c for c in disks.calls if c[1].endswith("/discover"))
    assert register[2] == {"name": "n1", "address": "10.77.0.11", "disk_root": "/srv/n1/disks", "cpus": 2.0,
                           "mem_mb": 4096}
    assert discover[2]["classes"] == {"spdl-n1-2": "hdd"}  # disk 1 (spdl-n1-1) is known: it keeps its class


def test_a_node_disk_service_forgot_is_registered_and_discovered_again(wiped):
    disks = FakeDiskService()
    agent = make(disks)
    agent.run_once()
    disks.fail = {("POST", "/nodes/n1/heartbeat"): ApiError(404, "NODE_NOT_FOUND", "no node named 'n1'")}
    it = agent.run_once()
    assert set(it.errors) == {"heartbeat"} and it.wiped == {}
    disks.fail = {}
    it = agent.run_once()
    assert it.errors == {} and it.heartbeat and it.discovered
    assert [c[1] for c in disks.calls].count("/nodes") == 2


def test_a_node_back_from_the_dead_removes_the_containers_it_left():
    long_ago = {"Id": "dead1", "Config": {"Labels": {"io.spindle.cluster": "c1"}},
                "State": {"Running": False, "FinishedAt": "2020-01-01T00:00:00Z"}}
    docker = FakeDocker(stopped=[long_ago])
    it = NodeAgent(SETTINGS, disks=FakeDiskService(), network=FakePools([]), docker_client=lambda: docker).run_once()
    assert it.containers_removed == ["dead1"] and docker.api.removed == ["dead1"], it
    assert "containers" not in it.errors
