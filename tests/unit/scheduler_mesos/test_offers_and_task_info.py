"""Mesos offer JSON → parsed offer, and the TaskInfo carved from it (pure, no master needed)."""
import base64
import json

from spindle_scheduler.mesos.launcher import consume
from spindle_scheduler.mesos.offers import parse_offer
from spindle_scheduler.mesos.task_info import EXECUTOR_CPUS, task_info

ALLOC = {"allocation_info": {"role": "spindle"}}


def disk(root: str, mb: int) -> dict:
    return {"name": "disk", "type": "SCALAR", "scalar": {"value": mb}, **ALLOC,
            "reservations": [{"type": "STATIC", "role": "spindle"}],
            "disk": {"source": {"type": "MOUNT", "mount": {"root": root}}}}


OFFER = {
    "id": {"value": "o-1"}, "framework_id": {"value": "f-1"}, "agent_id": {"value": "a-1"}, "hostname": "node-1",
    "resources": [
        {"name": "cpus", "type": "SCALAR", "scalar": {"value": 2.0}, **ALLOC},
        {"name": "mem", "type": "SCALAR", "scalar": {"value": 4096.0}, **ALLOC},
        {"name": "disk", "type": "SCALAR", "scalar": {"value": 1000.0}, **ALLOC},  # root disk: not a whole disk
        disk("/disks/d1", 4096), disk("/disks/d2", 4096),
        {"name": "ports", "type": "RANGES", "ranges": {"range": [{"begin": 31000, "end": 32000}]}, **ALLOC},
    ],
}


def test_offer_is_summarised_with_whole_disks_only():
    offer = parse_offer(OFFER)
    assert (offer.offer_id, offer.agent_id, offer.hostname) == ("o-1", "a-1", "node-1")
    assert (offer.cpus, offer.mem_mb) == (2.0, 4096.0)
    assert [(d.root, d.size_mb) for d in offer.disks] == [("/disks/d1", 4096), ("/disks/d2", 4096)]


def test_task_info_carves_resources_with_the_offers_role_and_carries_the_spec():
    offer = parse_offer(OFFER)
    info = task_info(offer, "m-1.abc", "m-1", 1.0, 512, offer.disks[:1], "spindle-mesos-executor", {"image": "x"})
    cpus, mem, whole_disk = info["resources"]
    assert cpus == {"name": "cpus", "type": "SCALAR", "scalar": {"value": 1.0}, **ALLOC}
    assert mem["scalar"] == {"value": 512} and mem["allocation_info"] == {"role": "spindle"}
    assert whole_disk == disk("/disks/d1", 4096)  # exactly as offered
    assert info["executor"]["executor_id"] == {"value": "m-1.abc"}
    assert info["executor"]["command"] == {"value": "spindle-mesos-executor", "shell": True}
    assert json.loads(base64.b64decode(info["data"])) == {"image": "x"}


def test_consume_takes_a_members_share_out_of_the_offer():
    offer = parse_offer(OFFER)
    consume(offer, {"cpus": 1.0, "mem_mb": 512}, ["/disks/d2"])
    assert offer.cpus == 1.0 - EXECUTOR_CPUS
    assert [d.root for d in offer.disks] == ["/disks/d1"]


def test_a_cluster_is_placed_on_offers_with_disk_classes_from_the_inventory():
    from spindle_scheduler.mesos.placing import place_cluster
    from spindle_scheduler.models import Task

    tasks = [Task(task_id=f"c1-w{i}.x", cluster_id="c1", member_id=f"c1-w{i}",
                  request={"role": "w", "cpus": 0.5, "mem_mb": 256, "disks": {"ssd": 1}}) for i in range(2)]
    offer = parse_offer(OFFER)
    placed = place_cluster(tasks, [offer], {"/disks/d1": "ssd", "/disks/d2": "ssd"})
    assert {task_id: [d.root for d in disks] for task_id, (_, disks, _) in placed.items()} == {
        "c1-w0.x": ["/disks/d1"], "c1-w1.x": ["/disks/d2"]}
    too_big = place_cluster(tasks, [offer], {"/disks/d1": "ssd", "/disks/d2": "hdd"})
    assert too_big == "c1-w1.x fits no node: node-1: needs 1 ssd disk, 0 free"


def test_a_replacement_is_placed_by_its_stored_options_and_the_members_running_now():
    from types import SimpleNamespace

    from spindle_scheduler.mesos.placing import place_cluster
    from spindle_scheduler.models import Task

    options = {"strategy": "pack", "anti_affinity_roles": ["w"], "excluded_hosts": ["node-3"], "preferred_hosts": []}
    replacement = Task(task_id="c1-w1.y", cluster_id="c1", member_id="c1-w1",
                       request={"role": "w", "cpus": 0.5, "mem_mb": 256, "disks": {}, **options})
    peer = Task(task_id="c1-w0.x", cluster_id="c1", member_id="c1-w0", hostname="node-1", state="TASK_RUNNING",
                request={"role": "w", "cpus": 0.5, "mem_mb": 256, "disks": {}, **options})
    asked: list = []

    def running_members(cluster_id, exclude):
        asked.append((cluster_id, set(exclude)))
        return [peer]

    store = SimpleNamespace(running_members=running_members)
    offers = [parse_offer({**OFFER, "hostname": host, "id": {"value": f"o-{host}"}})
              for host in ("node-1", "node-2", "node-3")]
    placed = place_cluster([replacement], offers, {}, store=store)
    assert {task_id: offer.hostname for task_id, (offer, _, _) in placed.items()} == {"c1-w1.y": "node-2"}
    assert asked == [("c1", {"c1-w1.y"})]
    refused = place_cluster([replacement], offers[::2], {}, store=store)
    assert refused == ("c1-w1.y fits no node: node-1: already has a member of role w of cluster c1 (anti-affinity: "
                       "one per node); node-3: excluded by the launch's placement (excluded_nodes)")
    job = Task(task_id="job-j1.z", cluster_id="c1", member_id="job-j1",
               request={"kind": "job", "cpus": 0.05, "mem_mb": 64, "disks": {}})
    assert place_cluster([job], offers[:1], {}, store=store)["job-j1.z"][0].hostname == "node-1"
    assert len(asked) == 2, "a job's driver is placed on its own: running members are not asked for"


def test_replicas_are_apart_over_the_inventory_s_racks_and_share_only_a_one_node_platform():
    from spindle_scheduler.mesos.placing import Platform, place_cluster
    from spindle_scheduler.models import Task

    def datanodes(count):
        return [Task(task_id=f"c1-dn{i}.x", cluster_id="c1", member_id=f"c1-dn{i}",
                     request={"role": "datanode", "cpus": 0.1, "mem_mb": 64, "disks": {}, "strategy": "pack",
                              "replica_roles": ["datanode"]}) for i in range(count)]

    def offer(host):
        return parse_offer({**OFFER, "hostname": host, "id": {"value": f"o-{host}"}})

    def hosts(placed):
        return sorted(o.hostname for o, _, _ in placed.values())

    # One node, the one offering: the three share it (packed).
    assert hosts(place_cluster(datanodes(3), [offer("node-1")], {})) == ["node-1"] * 3
    assert hosts(place_cluster(datanodes(3), [offer("node-1")], {}, Platform(frozenset({"node-1"})))) == \
        ["node-1"] * 3
    # Two active nodes, one offering now: not a one-node platform, so not shared.
    refused = place_cluster(datanodes(2), [offer("node-1")], {}, Platform(frozenset({"node-1", "node-2"})))
    assert "replicas apart: one per node" in refused
    # Racks: node-1 and node-2 in r1, node-3 in r2: two replicas take one rack each.
    domains = {"node-1": "r1", "node-2": "r1", "node-3": "r2"}
    for first in ("node-1", "node-2", "node-3"):
        offers = [offer(first)] + [offer(h) for h in ("node-1", "node-2", "node-3") if h != first]
        placed = hosts(place_cluster(datanodes(2), offers, {}, Platform(domains=domains)))
        assert sorted(domains[h] for h in placed) == ["r1", "r2"], placed


def test_the_failure_domains_are_read_every_few_seconds_and_kept_while_disk_service_is_away():
    from types import SimpleNamespace

    from spindle_common.errors import ApiError
    from spindle_scheduler.mesos.launcher import DOMAINS_TTL_S, Launcher

    answers = [{"node-1": "r1"}, ApiError(503, "UPSTREAM_UNAVAILABLE", "down"), {"node-1": "r2"}]

    def failure_domains():
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    launcher = Launcher(None, SimpleNamespace(failure_domains=failure_domains), None, "")
    now = [0.0]
    launcher.clock = lambda: now[0]
    assert launcher.failure_domains() == {"node-1": "r1"}
    now[0] = DOMAINS_TTL_S / 2
    assert launcher.failure_domains() == {"node-1": "r1"} and len(answers) == 2, "not read again yet"
    now[0] = DOMAINS_TTL_S
    assert launcher.failure_domains() == {"node-1": "r1"}, "disk-service away: the last ones read"
    now[0] = 2 * DOMAINS_TTL_S
    assert launcher.failure_domains() == {"node-1": "r2"}


def test_a_member_learns_its_node_the_node_s_rack_and_which_launch_it_is_from_its_environment():
    from spindle_scheduler.mesos.launcher import member_env
    from spindle_scheduler.mesos.placing import Platform

    platform = Platform(frozenset({"node-1", "node-2"}), {"node-1": "r1"})
    container = {"image": "x", "env": {"A": "1", "SPINDLE_RACK": "forged"}}
    assert member_env(container, "node-1", platform, 1) == {"A": "1", "SPINDLE_NODE": "node-1", "SPINDLE_RACK": "r1",
                                                           "SPINDLE_LAUNCH": "1"}
    # A node without a rack (or the inventory not read yet) is its own failure domain; a relaunch says so.
    assert member_env({"image": "x"}, "node-2", platform, 3) == {"SPINDLE_NODE": "node-2", "SPINDLE_RACK": "node-2",
                                                                 "SPINDLE_LAUNCH": "3"}
