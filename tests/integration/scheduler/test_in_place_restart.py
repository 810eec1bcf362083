"""``restart: in_place`` on a real task store: a member whose container ended on its node keeps its
disks (its release removes the container only) and its relaunch is pinned to them on that node; an
end that may mean a lost node, a kill, an unreachable node or a ``replace`` member gets fresh disks;
a member that kept its disks and is then removed (a resize) or deleted owes their release."""
import pytest

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_scheduler.mesos.framework import SpindleFramework
from spindle_scheduler.models import Task
from spindle_scheduler.store import TaskStore, task_view
from tests.support.framework import RecordingDriver, update

ROOTS = ["/var/lib/spindle/disks/ssd-1", "/var/lib/spindle/disks/hdd-2"]


class Releases:
    """The release: what each ended task gave back (its disks too, or its container only)."""

    def __init__(self):
        self.done: list[tuple[str, str]] = []

    def __call__(self, task) -> None:
        self.done.append((task.member_id, "container" if task.keep_disks else "container and disks"))


def framework_with(fresh_database, restart: str):
    migrations.upgrade("spindle_scheduler", fresh_database)
    store = TaskStore(session_factory(fresh_database))
    store.add([Task(task_id="nn.a", cluster_id="c1", member_id="c1-namenode-1",
                    request={"cpus": 1, "mem_mb": 64, "restart": restart, "disks": {"ssd": 1, "hdd": 1}},
                    state="TASK_RUNNING", hostname="spdl-n2", agent_id="agent-2", launches=1, disk_roots=ROOTS,
                    disks=[{"container_path": "/data/1", "mount_point": ROOTS[0], "id": 7},
                           {"container_path": "/data/2", "mount_point": ROOTS[1], "id": 9}], ip="172.31.200.10")])
    releases = Releases()
    freed: list[list[str]] = []

    class Launcher:
        @staticmethod
        def release_disks(owners):
            freed.append(list(owners))

    framework = SpindleFramework(store, Launcher(), release=releases)
    return framework, store, releases, freed


@pytest.mark.parametrize("ended", ["TASK_FAILED", "TASK_FINISHED"])
def test_an_ended_container_keeps_its_disks_and_starts_again_on_them(fresh_database, ended):
    framework, store, releases, freed = framework_with(fresh_database, "in_place")
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("nn.a", ended, "container exited with code 137"))
    task = store.get("nn.a")
    assert task.state == ended and task.keep_disks and not task.release_owed, "released at its end"
    assert releases.done == [("c1-namenode-1", "container")], "its container only"

    again = framework.relaunch(driver, "c1", "c1-namenode-1", launches_seen=1, reason="replacement 1")
    assert again.state == "PENDING" and again.task_id != "nn.a" and again.launches == 2
    assert again.request["pin"] == {"node": "spdl-n2", "mount_points": ROOTS}, "pinned to its own disks"
    assert (again.hostname, again.disk_roots) == ("spdl-n2", ROOTS) and [d["id"] for d in again.disks] == [7, 9]
    assert not again.keep_disks and "in place on node spdl-n2" in again.message
    assert task_view(again).pinned_to == "spdl-n2", "the orchestrator is told where it waits"
    assert freed == [] and driver.revived == 1, "nothing freed; offers revived for it"
    assert framework.relaunch(driver, "c1", "c1-namenode-1", launches_seen=1, reason="again").task_id == \
        again.task_id, "a repeat changes nothing"


@pytest.mark.parametrize(("restart", "ended"), [("in_place", "TASK_LOST"), ("in_place", "TASK_GONE"),
                                                 ("in_place", "TASK_UNKNOWN"), ("replace", "TASK_FAILED"),
                                                 ("never", "TASK_FAILED")])
def test_ends_that_may_mean_a_lost_node_and_other_policies_get_fresh_disks(fresh_database, restart, ended):
    framework, store, releases, _ = framework_with(fresh_database, restart)
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("nn.a", ended, "gone"))
    assert not store.get("nn.a").keep_disks
    framework.releases.run_once()
    assert releases.done == [("c1-namenode-1", "container and disks")]
    again = framework.relaunch(driver, "c1", "c1-namenode-1", launches_seen=1, reason="replacement 1")
    assert "pin" not in again.request and again.hostname is None and again.disk_roots == []
    assert task_view(again).pinned_to is None


def test_a_member_killed_by_the_platform_is_not_kept(fresh_database):
    framework, store, releases, _ = framework_with(fresh_database, "in_place")
    driver = RecordingDriver()
    framework.kill_member(driver, "c1", "c1-namenode-1")  # a resize removes it
    assert driver.killed == ["nn.a"]
    framework.statusUpdate(driver, update("nn.a", "TASK_FAILED", "killed: exited 137"))
    assert not store.get("nn.a").keep_disks
    framework.releases.run_once()
    assert releases.done == [("c1-namenode-1", "container and disks")]


def test_an_unreachable_member_is_replaced_on_fresh_disks(fresh_database):
    framework, store, _, freed = framework_with(fresh_database, "in_place")
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("nn.a", "TASK_UNREACHABLE", "agent gone"))
    again = framework.relaunch(driver, "c1", "c1-namenode-1", launches_seen=1, reason="replacement 1")
    assert freed == [["c1-namenode-1"]] and driver.killed == ["nn.a"], "its disks freed, the old task killed"
    assert "pin" not in again.request and again.disk_roots == [] and not again.keep_disks


@pytest.mark.parametrize("how", ["removed", "deleted"])
def test_kept_disks_of_a_member_that_is_removed_or_deleted_are_released(fresh_database, how):
    framework, store, releases, _ = framework_with(fresh_database, "in_place")
    driver = RecordingDriver()
    framework.statusUpdate(driver, update("nn.a", "TASK_FAILED", "exited 1"))
    framework.releases.run_once()
    assert releases.done == [("c1-namenode-1", "container")] and not store.get("nn.a").release_owed
    if how == "removed":
        framework.kill_member(driver, "c1", "c1-namenode-1")
    else:
        framework.kill_cluster(driver, "c1")
    task = store.get("nn.a")
    assert task.release_owed and not task.keep_disks, "it owes the release of its disks now"
    framework.releases.run_once()
    assert releases.done[-1] == ("c1-namenode-1", "container and disks")
    assert driver.killed == [], "ended already: nothing to kill"
