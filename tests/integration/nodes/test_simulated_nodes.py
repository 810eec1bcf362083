"""Spindle on three simulated nodes (deploy/node): each a network namespace with its own dockerd,
loop disks, Mesos agent and node agent, joined to the control plane by the node fabric. Members get
floating IPs of the fabric pool (macvlan), which follow them to another node.

While the nodes run (tests/integration/nodes/conftest.py), this machine's own Mesos agent is stopped
and the orchestrator takes its IPs from the `fabric` pool, as on a platform whose members run on other
machines; both are put back after.
"""
import json
import time

import docker
import httpx
import pytest

from spindle_client.client import SpindleError
from tests.integration.platform.cluster_checks import wait_settled
from tests.support.internal import internal_headers
from tests.support.live_users import live_user
from tests.support.nodes import (
    IMAGES,
    NODE_HDDS,
    NODES,
    STATE_DIR,
    active,
    all_disks_free,
    deploy_lib,
    member_page,
    node_disks,
    node_docker,
    resolved,
    sh,
    wait_for,
)
from tests.support.probes import probe, reached, url

pytestmark = pytest.mark.disruptive  # stops this machine's agent and restarts the orchestrator
REGISTRY = "172.31.250.1:5000"  # the nodes' read-only registry on the fabric (deploy/lib/registry.sh)


def test_each_node_registers_its_own_disks_and_agent(nodes, database_url):
    for node in NODES:
        disks = node_disks(nodes["token"], node)
        assert sorted(d["fs_label"] for d in disks) == [f"spdl-{node}-{i}" for i in range(1, NODE_HDDS + 1)], disks
        # Mounted by the node's own agent, below its own disk root, by label, nosuid and nodev.
        assert sorted(d["mount_point"] for d in disks) == [f"{STATE_DIR}/nodes/{node}/disks/spdl-{node}-{i}"
                                                           for i in range(1, NODE_HDDS + 1)], disks
        for d in disks:
            options = sh("findmnt", "-rn", "-o", "OPTIONS", d["mount_point"]).split(",")
            assert {"nosuid", "nodev"} <= set(options), (d["mount_point"], options)
        assert all(d["state"] == "free" for d in disks), disks
    # An admin sees every node, each heart-beating through its node agent, and their disks.
    with live_user(database_url, "nodeadmin", is_admin=True) as admin:
        headers = {"Authorization": f"Bearer {admin.token}"}
        listed = httpx.get("http://127.0.0.1:8080/admin/nodes", headers=headers, timeout=10).raise_for_status().json()
        seen = {n["name"]: n for n in listed}
        assert set(NODES) <= set(seen) and all(seen[n]["last_seen_at"] for n in NODES), listed
        disks = httpx.get("http://127.0.0.1:8080/admin/disks", headers=headers, params={"page_size": 500},
                          timeout=10).raise_for_status().json()["items"]
        assert {d["node"] for d in disks} >= set(NODES)
    # Every node has its own Docker daemon: the fabric pool's network exists there, made by its agent,
    # and its images came from the nodes' registry over the fabric (their digests name it), the same
    # images as the host's.
    for node in NODES:
        wait_for(f"the fabric network on {node}",
                 lambda n=node: [net for net in node_docker(n).networks.list() if net.name == "spindle-fabric"], 30)
        for name in IMAGES:
            image = node_docker(node).images.get(name)
            assert any(d.startswith(f"{REGISTRY}/{name.split(':')[0]}@sha256:") for d in image.attrs["RepoDigests"]), \
                (node, name, image.attrs["RepoDigests"])
            assert image.id == docker.from_env().images.get(name).id


def test_a_floating_ip_freed_on_one_node_answers_at_once_on_another(nodes, database_url):
    """Docker derives a member's MAC from its IP: an IP freed on n1 and given to a member on n2 keeps
    its MAC, so the fabric bridge (its forwarding table) and this host (its neighbour cache) still send
    that MAC's frames to n1 until the new member speaks. It announces itself when it starts
    (spindle_executor.announce), so the first request to it is answered: issue 25's node-loss flake,
    whose first request once waited out its 3 s."""
    def on(user, node: str) -> dict:
        others = [n for n in NODES if n != node]
        options = {"roles": {"server": {"count": 1}}, "placement": {"excluded_nodes": others}}
        cluster = wait_settled(user, user.launch("static-web", "1.0", options), ("RUNNING", "FAILED"), timeout=240)
        assert cluster["state"] == "RUNNING", cluster
        [member] = cluster["members"]
        assert member["node"] == node, member
        return cluster

    with live_user(database_url, "moved") as user:
        first = on(user, "n1")
        [before] = first["members"]
        assert f"of {first['id']}</h1>" in member_page(before["ip"])  # frames for its MAC go to n1's port now
        user.delete(first)
        assert wait_settled(user, first, ("DESTROYED",), timeout=180)["state"] == "DESTROYED"
        second = on(user, "n2")
        try:
            [after] = second["members"]
            assert after["ip"] == before["ip"], "the lowest free IP of the pool, freed a moment ago"
            assert f"of {second['id']}</h1>" in member_page(after["ip"]), "the first request, within 3 s"
        finally:
            user.delete(second)
            wait_settled(user, second, ("DESTROYED",), timeout=180)


def test_a_node_dies_its_member_moves_with_its_ip_and_the_node_comes_back_clean(nodes, database_url):
    with live_user(database_url, "nodes") as user:
        options = {"roles": {"server": {"count": 2}}, "placement": {"anti_affinity": ["server"]}}
        cluster = wait_settled(user, user.launch("static-web", "1.0", options), ("RUNNING", "FAILED"), timeout=240)
        try:
            assert cluster["state"] == "RUNNING", cluster
            placed = {m["member_id"]: m["node"] for m in cluster["members"]}
            assert len(set(placed.values())) == 2 and set(placed.values()) <= set(NODES), placed
            for member in cluster["members"]:
                # On its node's own Docker daemon, not this machine's; reachable at its floating IP.
                [container] = node_docker(member["node"]).containers.list(
                    filters={"label": f"io.spindle.member={member['member_id']}"})
                container.exec_run(["sh", "-c", "echo before > /data/1/marker"])
                assert f"of {cluster['id']}</h1>" in member_page(member["ip"])  # the first request
                mine = {"label": f"io.spindle.member={member['member_id']}"}
                assert docker.from_env().containers.list(filters=mine) == [], "not on this machine's Docker"
            victim = cluster["members"][0]
            dead = victim["node"]
            held_on_dead = {d["id"] for d in victim["disks"]}

            killed_at = time.monotonic()
            sh("deploy/node", "kill", dead)

            def moved():
                now = user.cluster(cluster)
                member = next(m for m in now["members"] if m["member_id"] == victim["member_id"])
                ok = (member["state"] == "TASK_RUNNING" and member["node"] not in (None, dead)
                      and now["state"] == "RUNNING")
                return (now, member) if ok else None
            now, member = wait_for("the member running on another node", moved, timeout=180)
            page = wait_for("its page at the same IP", lambda: member_page(member["ip"]), 30)
            recovered_s = time.monotonic() - killed_at
            print(f"node loss: member {victim['member_id']} back on {member['node']} after {recovered_s:.1f} s")
            assert (member["ip"], member["dns_name"]) == (victim["ip"], victim["dns_name"]), member
            assert f"of {cluster['id']}</h1>" in page
            assert wait_for("its DNS name resolving again", lambda: resolved(member["dns_name"]), 30) == [victim["ip"]]
            [new] = node_docker(member["node"]).containers.list(
                filters={"label": f"io.spindle.member={victim['member_id']}"})
            assert new.exec_run(["ls", "/data/1/marker"]).exit_code != 0, "fresh disks on the new node"
            replaced = [e for e in user.events(now) if e["state"] == "REPLACED"]
            assert [e["member_id"] for e in replaced] == [victim["member_id"]], replaced
            assert f"while node {dead} unreachable" in replaced[0]["message"], replaced[0]
            # The survivor kept its container and its file.
            survivor = next(m for m in now["members"] if m["member_id"] != victim["member_id"])
            [kept] = node_docker(survivor["node"]).containers.list(
                filters={"label": f"io.spindle.member={survivor['member_id']}"})
            assert kept.exec_run(["cat", "/data/1/marker"]).output == b"before\n"

            # The dead node's disks wait for their node: released, not free, until its agent wipes them.
            assert {d["state"] for d in node_disks(nodes["token"], dead) if d["id"] in held_on_dead} <= {"wiping"}
            sh("deploy/node", "start", dead)
            wait_for("the node's released disks wiped by its own agent",
                     lambda: all(d["state"] == "free" for d in node_disks(nodes["token"], dead)), 120)
            # Its old container never runs again and is removed by its node agent (a minute after it
            # stopped: docs/MULTINODE.md); nothing is held twice.
            old = {"label": f"io.spindle.member={victim['member_id']}"}
            wait_for(f"the old container of {victim['member_id']} gone from {dead}",
                     lambda: node_docker(dead).containers.list(all=True, filters=old) == [], 150)
            for m in now["members"]:  # one container per member across every node's Docker
                where = [n for n in NODES for _ in node_docker(n).containers.list(
                    filters={"label": f"io.spindle.member={m['member_id']}"})]
                assert where == [m["node"]], (m["member_id"], where)
            held = [d for n in NODES for d in node_disks(nodes["token"], n) if d["state"] == "allocated"]
            assert sorted(d["owner"] for d in held) == sorted(m["member_id"] for m in now["members"]), held
        finally:
            user.delete(cluster)
            cluster = wait_settled(user, cluster, ("DESTROYED",), timeout=180)
        for node in NODES:
            left = node_docker(node).containers.list(all=True, filters={"label": f"io.spindle.cluster={cluster['id']}"})
            assert left == [], (node, [c.name for c in left])
        wait_for("every node's disks wiped and free", lambda: all_disks_free(nodes["token"], NODES), 120)


def test_plans_explain_per_node_and_pack_fills_one_node(nodes, database_url):
    with live_user(database_url, "nodeplan") as user:
        small = {"roles": {"server": {"count": 3, "cpus": 0.1, "mem_mb": 64}}}
        # Plans look at the offers the scheduler holds: once every node's disks are back in them,
        # spread puts three small members on three nodes, and pack two on one.
        spread = wait_for("a plan spreading over every node", lambda: (p := user.plan(
            "static-web", "1.0", {**small, "placement": {"strategy": "spread"}})).placeable and {
            m.node for m in p.members} == set(NODES) and p, 60)
        two = {"roles": {"server": {"count": 2, "cpus": 0.1, "mem_mb": 64}}}
        packed = wait_for("a plan packing two members on one node", lambda: (p := user.plan(
            "static-web", "1.0", {**two, "placement": {"strategy": "pack"}})).placeable and len(
            {m.node for m in p.members}) == 1 and p, 60)
        assert spread.placeable and packed.placeable
        excluded = wait_for("a plan without n1", lambda: (p := user.plan(
            "static-web", "1.0", {"roles": {"server": {"count": 2, "cpus": 0.1, "mem_mb": 64}},
                                  "placement": {"excluded_nodes": ["n1"]}})).placeable and p, 60)
        assert "n1" not in {m.node for m in excluded.members}, excluded
        # Four servers that must each be on their own node, on three nodes: one fits nowhere, and
        # each node says why (once no node lacks a disk that is being wiped).
        four = {"roles": {"server": {"count": 4, "cpus": 0.1, "mem_mb": 64}},
                "placement": {"anti_affinity": ["server"]}}
        plan = wait_for("a plan refused by anti-affinity alone", lambda: (p := user.plan("static-web", "1.0", four))
                        .reasons and {r.constraint for r in p.reasons[0].nodes} == {"anti_affinity"} and p, 60)
        assert not plan.placeable and len(plan.reasons) == 1, plan
        by_node = {r.node: r for r in plan.reasons[0].nodes}
        assert set(by_node) == set(NODES), plan
        assert all("anti-affinity: one per node" in r.message for r in by_node.values()), plan


def test_replicas_are_planned_one_per_node_over_racks_and_too_many_are_refused(nodes, database_url):
    """HDFS DataNodes (a replica role) on the three nodes: planned one per node (and with them the
    journal members and the two NameNodes of HA, on by default there); with n1 and n2 in one
    rack (the admin's inventory) two of them take both racks though both preferred nodes are in one;
    four on three nodes are refused, at the plan and at the launch, naming the role, count and nodes."""
    small = {"cpus": 0.25, "mem_mb": 512}
    roles = {"namenode": {**small, "disks": {"hdd": 1}}, "datanode": {**small, "count": 3, "disks": {"hdd": 1}}}
    with live_user(database_url, "replicas") as user, live_user(database_url, "racks", is_admin=True) as admin:
        three = wait_for("a plan of three DataNodes", lambda: (p := user.plan("hadoop", "3.3", {"roles": roles}))
                         .placeable and p, 60)
        datanodes = [m.node for m in three.members if m.member_id.startswith("datanode-")]
        assert sorted(datanodes) == sorted(NODES), three
        # Three nodes: HDFS has high availability by default, its NameNodes and journal members apart too.
        journals = [m.node for m in three.members if m.member_id.startswith("journalnode-")]
        namenodes = {m.node for m in three.members if m.member_id.startswith("namenode-")}
        assert sorted(journals) == sorted(NODES) and len(namenodes) == 2, three

        two = {"roles": {**roles, "datanode": {**roles["datanode"], "count": 2}},
               "placement": {"preferred_nodes": ["n1", "n2"]}}
        alone = user.plan("hadoop", "3.3", two)
        assert sorted(m.node for m in alone.members if m.member_id.startswith("datanode-")) == ["n1", "n2"], \
            "each node its own failure domain: the preferred nodes win"
        try:
            for node, rack in (("n1", "r1"), ("n2", "r1"), ("n3", "r2")):
                assert admin.set_rack(node, rack).failure_domain == rack
            # The scheduler reads the racks again within 10 s.
            racked = wait_for("a plan over both racks", lambda: (p := user.plan("hadoop", "3.3", two)).placeable and
                              "n3" in {m.node for m in p.members if m.member_id.startswith("datanode-")} and p, 30)
            datanodes = sorted(m.node for m in racked.members if m.member_id.startswith("datanode-"))
            assert len(datanodes) == 2 and datanodes[1] == "n3" and datanodes[0] in ("n1", "n2"), racked
        finally:
            for node in NODES:
                admin.set_rack(node, None)

        four = {"roles": {**roles, "datanode": {**roles["datanode"], "count": 4}}}
        for attempt in (lambda: user.plan("hadoop", "3.3", four), lambda: user.launch("hadoop", "3.3", four)):
            with pytest.raises(SpindleError) as refused:
                attempt()
            assert (refused.value.status, refused.value.code, refused.value.details) == (
                422, "REPLICAS_CANNOT_BE_APART", {"role": "datanode", "count": 4, "nodes": list(NODES)})
        assert list(user.clusters(user.username)) == [], "a refused launch creates nothing"


def test_tenants_are_isolated_across_nodes(nodes, database_url):
    """Two users' clusters on the fabric (one pool, three nodes): a cluster's members on two nodes
    reach each other, nothing of the other user's cluster, and the other way round."""
    small = {"cpus": 0.1, "mem_mb": 64}
    with live_user(database_url, "isoa") as a, live_user(database_url, "isob") as b:
        mine = a.launch("static-web", "1.0", {"roles": {"server": {"count": 2, **small}},
                                              "placement": {"anti_affinity": ["server"]}})
        theirs = b.launch("static-web", "1.0", {"roles": {"server": {"count": 2, **small}},
                                                "placement": {"anti_affinity": ["server"]}})
        try:
            mine, theirs = (wait_settled(u, c, ("RUNNING", "FAILED"), timeout=240) for u, c in ((a, mine), (b, theirs)))
            assert mine["state"] == theirs["state"] == "RUNNING", (mine, theirs)
            for own, other in ((mine, theirs), (theirs, mine)):
                for member in own["members"]:
                    [container] = node_docker(member["node"]).containers.list(
                        filters={"label": f"io.spindle.member={member['member_id']}"})
                    [peer] = [m for m in own["members"] if m is not member]
                    assert peer["node"] != member["node"]
                    targets = [url(peer)] + [url(m) for m in other["members"]]
                    expected = {url(peer): True} | {url(m): False for m in other["members"]}
                    # the other tenant's members: on this node or another (2 of 3 nodes each)
                    assert reached(probe(container, *targets)) == expected, (member, targets)
        finally:
            for user, cluster in ((a, mine), (b, theirs)):
                user.delete(cluster)
            for user, cluster in ((a, mine), (b, theirs)):
                wait_settled(user, cluster, ("DESTROYED",), timeout=300)


def test_killing_the_master_then_restarting_an_agent_loses_no_member(nodes, database_url):
    with live_user(database_url, "noderestart") as user:
        cluster = wait_settled(user, user.launch("static-web", "1.0", {"roles": {"server": {"count": 3}}}),
                               ("RUNNING", "FAILED"), timeout=240)
        try:
            assert cluster["state"] == "RUNNING", cluster
            containers = {}
            for member in cluster["members"]:
                [c] = node_docker(member["node"]).containers.list(
                    filters={"label": f"io.spindle.member={member['member_id']}"})
                assert c.exec_run(["sh", "-c", f"echo {member['member_id']} > /data/1/kept"]).exit_code == 0
                containers[member["member_id"]] = (member["node"], c.id)

            def all_kept() -> None:
                now = user.cluster(cluster)
                assert now["state"] == "RUNNING", now
                for m in now["members"]:
                    assert m["replacements"] == 0 and m["state"] == "TASK_RUNNING", m
                    node, cid = containers[m["member_id"]]
                    c = node_docker(node).containers.get(cid)
                    assert c.status == "running", (m, c.status)
                    assert c.exec_run(["cat", "/data/1/kept"]).output.decode().strip() == m["member_id"]
                for d in (d for n in NODES for d in node_disks(nodes["token"], n)):
                    assert d["state"] in ("free", "allocated"), d  # nothing released, nothing wiped

            # As a new user would: the master SIGKILLed, then ./deploy/up.
            sh("bash", "-c", f"kill -KILL $(cat {STATE_DIR}/run/mesos-master.pid)")
            sh("deploy/up")
            deploy_lib("stop_mesos_agent")  # up starts this machine's agent with the master
            wait_for("every node's agent registered with the new master",
                     lambda: all(active(n) for n in NODES), 60)
            time.sleep(20)  # longer than the agent timeout (15 s): nothing may have been found lost
            all_kept()
            member_node = cluster["members"][0]["node"]
            sh("deploy/node", "restart-agent", member_node)
            wait_for(f"{member_node}'s agent registered again",
                     lambda: active(member_node), 60)
            time.sleep(20)
            all_kept()
        finally:
            user.delete(cluster)
            wait_settled(user, cluster, ("DESTROYED",), timeout=180)


def test_the_agent_resources_of_a_node_as_a_real_mesos_agent_would_take_them(nodes):
    """docs/MULTINODE.md shows this document: a real agent's --resources for the node's disks."""
    def resources() -> list[dict]:
        return httpx.get(f"http://127.0.0.1:8083/nodes/{NODES[0]}/mesos-resources", timeout=10,
                         headers=internal_headers(nodes["token"], "test", "service")).raise_for_status().json()
    # Every disk, once a previous test's are wiped (a disk being wiped is offered to nobody).
    def with_every_disk() -> list[dict] | None:
        answer = resources()
        return answer if len([r for r in answer if r["name"] == "disk"]) == NODE_HDDS else None
    answer = wait_for("every disk offered", with_every_disk, 120)
    disks = [r for r in answer if r["name"] == "disk"]
    assert all(r["disk"]["source"]["type"] == "MOUNT" and r["reservations"] == [{"type": "STATIC", "role": "spindle"}]
               for r in disks), json.dumps(answer)
    assert {r["disk"]["source"]["mount"]["root"] for r in disks} == {
        f"{STATE_DIR}/nodes/{NODES[0]}/disks/spdl-{NODES[0]}-{i}" for i in range(1, NODE_HDDS + 1)}
