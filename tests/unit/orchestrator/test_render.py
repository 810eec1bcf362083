"""Members planned from manifest + options, and their templates rendered with peers' IPs and disks."""
import pytest

from spindle_orchestrator.render import RenderError, disk_dirs, plan_members, render_member

MANIFEST = {
    "image": "spindle/spark:3.5",
    "roles": {
        "master": {"count": {"default": 1, "min": 1, "max": 1}, "cpus": 1, "mem_mb": 1024, "disks": {},
                   "command": ["spark-class", "Master", "--host", "{{ member.ip }}"], "health": {"tcp_port": 7077}},
        "worker": {"count": {"default": 2, "min": 1, "max": 8}, "cpus": 1, "mem_mb": 2048, "disks": {"hdd": 2},
                   "command": ["spark-class", "Worker", "spark://{{ peers.master[0].ip }}:7077"],
                   "env": {"SPARK_LOCAL_DIRS": "{{ member.data_dirs | join(',') }}"},
                   "files": {"/etc/spindle/member": "{{ member.name }} of {{ cluster.id }} ({{ settings.tag }})\n"}},
    },
}


def test_options_override_role_defaults():
    members = plan_members("c1", MANIFEST, {"roles": {"worker": {"count": 3, "mem_mb": 4096, "disks": {"ssd": 1}}}})
    assert [m.member_id for m in members] == ["c1-master-1", "c1-worker-1", "c1-worker-2", "c1-worker-3"]
    worker = members[1]
    assert (worker.name, worker.cpus, worker.mem_mb, worker.disks) == ("worker-1", 1.0, 4096, {"hdd": 2, "ssd": 1})
    assert members[0].disks == {}


def test_templates_see_peers_ips_disks_and_settings():
    members = plan_members("c1", MANIFEST, {})
    ips = {"c1-master-1": "10.0.0.10", "c1-worker-1": "10.0.0.11", "c1-worker-2": "10.0.0.12"}
    container = render_member({"id": "c1"}, MANIFEST, {"settings": {"tag": "t"}}, members[2], ips, members)
    assert container["command"] == ["spark-class", "Worker", "spark://10.0.0.10:7077"]
    assert container["env"] == {"SPARK_LOCAL_DIRS": "/data/1,/data/2"}
    assert container["files"] == {"/etc/spindle/member": "worker-2 of c1 (t)\n"}
    assert container["hostname"] == "worker-2" and container["image"] == "spindle/spark:3.5"


def test_unknown_template_name_is_a_render_error_naming_the_field():
    manifest = {**MANIFEST, "roles": {"master": {**MANIFEST["roles"]["master"], "command": ["{{ member.nope }}"]}}}
    members = plan_members("c1", manifest, {})
    with pytest.raises(RenderError, match=r"role master command\[0\]"):
        render_member({"id": "c1"}, manifest, {}, members[0], {}, members)


def test_templates_cannot_reach_python_internals():
    manifest = {**MANIFEST, "roles": {"master": {**MANIFEST["roles"]["master"],
                                                  "command": ["{{ member.__class__.__mro__ }}"]}}}
    members = plan_members("c1", manifest, {})
    with pytest.raises(RenderError):
        render_member({"id": "c1"}, manifest, {}, members[0], {}, members)


@pytest.mark.parametrize(("disks", "dirs"), [
    ({}, {}),
    ({"hdd": 2}, {"hdd": ["/data/1", "/data/2"]}),
    ({"ssd": 1, "hdd": 2}, {"hdd": ["/data/1", "/data/2"], "ssd": ["/data/3"]}),  # the scheduler's class order
    ({"hdd": 0, "ssd": 1}, {"ssd": ["/data/1"]}),
    ({"ssd": 1, "nvme": 1, "hdd": 1}, {"hdd": ["/data/1"], "nvme": ["/data/2"], "ssd": ["/data/3"]}),
])
def test_disk_dirs_by_class(disks, dirs):
    assert disk_dirs(disks) == dirs
