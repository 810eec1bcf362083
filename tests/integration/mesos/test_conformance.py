"""Mesos v1 API conformance, driven by the real pymesos scheduler and executor drivers."""
import base64
import time

import pytest

from tests.integration.mesos.conftest import EXECUTOR, Recorder, framework, operator, start_framework


def launch(driver, offer, task_id: str, data: bytes = b"") -> None:
    resources = offer["resources"]
    cpus = next(r for r in resources if r["name"] == "cpus")
    mem = next(r for r in resources if r["name"] == "mem")
    disk = next(r for r in resources if r.get("disk", {}).get("source", {}).get("type") == "MOUNT")
    task = {"name": task_id, "task_id": {"value": task_id}, "agent_id": offer["agent_id"],
            "resources": [{**cpus, "scalar": {"value": 1}}, {**mem, "scalar": {"value": 128}}, disk],
            "executor": {"executor_id": {"value": task_id}, "command": {"value": EXECUTOR, "shell": True},
                         "resources": [{**cpus, "scalar": {"value": 0.1}}, {**mem, "scalar": {"value": 32}}]},
            "data": base64.b64encode(data).decode()}
    driver.launchTasks([offer["id"]], [task])


def states(recorder: Recorder, task_id: str) -> list[str]:
    return [u["state"] for u in recorder.updates if u["task_id"]["value"] == task_id]


def test_offer_launch_run_kill(master):
    url, disk_root = master
    recorder = Recorder()
    with framework(url, recorder) as driver:
        recorder.wait(lambda r: r.offers)
        offer = recorder.offers[0]
        mounts = [r for r in offer["resources"] if r.get("disk", {}).get("source", {}).get("type") == "MOUNT"]
        assert [m["disk"]["source"]["mount"]["root"] for m in mounts] == [disk_root]
        assert mounts[0]["reservations"] == [{"type": "STATIC", "role": "spindle"}]
        assert all(r["allocation_info"] == {"role": "spindle"} for r in offer["resources"])

        launch(driver, offer, "t-run")
        recorder.wait(lambda r: "TASK_RUNNING" in states(r, "t-run"))
        tasks = operator(url, "GET_TASKS")["get_tasks"]["tasks"]
        assert [(t["task_id"]["value"], t["state"]) for t in tasks] == [("t-run", "TASK_RUNNING")]

        # While the task holds the disk, new offers do not contain it.
        recorder.wait(lambda r: len(r.offers) >= 2)
        later = recorder.offers[-1]
        assert not [r for r in later["resources"] if r.get("disk")], "the task's whole disk is not offered again"

        driver.killTask({"value": "t-run"})
        recorder.wait(lambda r: "TASK_KILLED" in states(r, "t-run"))
        state = operator(url, "GET_STATE")["get_state"]
        assert [t["task_id"]["value"] for t in state["get_tasks"]["completed_tasks"]] == ["t-run"]


def test_reconcile_reports_known_and_unknown_tasks(master):
    url, _ = master
    recorder = Recorder()
    with framework(url, recorder) as driver:
        recorder.wait(lambda r: r.offers)
        launch(driver, recorder.offers[0], "t-rec")
        recorder.wait(lambda r: "TASK_RUNNING" in states(r, "t-rec"))
        driver.reconcileTasks([{"task_id": {"value": "t-rec"}}, {"task_id": {"value": "t-ghost"}}])
        recorder.wait(lambda r: states(r, "t-rec").count("TASK_RUNNING") >= 2 and "TASK_LOST" in states(r, "t-ghost"))
        reconciled = [u for u in recorder.updates if u.get("reason") == "REASON_RECONCILIATION"]
        assert {u["task_id"]["value"] for u in reconciled} == {"t-rec", "t-ghost"}


def test_executor_crash_fails_the_task(master):
    url, _ = master
    recorder = Recorder()
    with framework(url, recorder) as driver:
        recorder.wait(lambda r: r.offers)
        launch(driver, recorder.offers[0], "t-crash", b"crash")
        recorder.wait(lambda r: "TASK_FAILED" in states(r, "t-crash"))
        failed = next(u for u in recorder.updates if u["state"] == "TASK_FAILED")
        assert failed["reason"] == "REASON_EXECUTOR_TERMINATED" and "code 3" in failed["message"]


def test_decline_with_refuse_seconds_holds_offers_back(master):
    url, _ = master
    recorder = Recorder()
    recorder.decline_with = 3600.0
    with framework(url, recorder) as driver:
        recorder.wait(lambda r: r.offers)
        time.sleep(3)  # several allocation rounds
        assert len(recorder.offers) == 1, "a declined offer is not re-offered within refuse_seconds"
        driver.reviveOffers()
        recorder.decline_with = None
        recorder.wait(lambda r: len(r.offers) >= 2)


def test_failover_keeps_tasks_and_stop_without_failover_tears_down(master):
    url, _ = master
    first = Recorder()
    driver = start_framework(url, first)
    first.wait(lambda r: r.offers)
    launch(driver, first.offers[0], "t-keep")
    first.wait(lambda r: "TASK_RUNNING" in states(r, "t-keep"))
    framework_id = first.framework_id
    driver.stop(failover=True)
    driver.join()

    second = Recorder()
    driver = start_framework(url, second, framework_id)
    try:
        second.wait(lambda r: r.framework_id == framework_id)
        tasks = operator(url, "GET_TASKS")["get_tasks"]["tasks"]
        assert [(t["task_id"]["value"], t["state"]) for t in tasks] == [("t-keep", "TASK_RUNNING")]
    finally:
        driver.stop()  # no failover: TEARDOWN kills the framework's tasks
        driver.join()
    deadline = time.monotonic() + 20
    while operator(url, "GET_TASKS")["get_tasks"]["tasks"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert operator(url, "GET_TASKS")["get_tasks"]["tasks"] == []


def test_status_updates_are_resent_until_acknowledged(master):
    url, _ = master
    recorder = Recorder()
    with framework(url, recorder, implicit_acknowledgements=False) as driver:
        recorder.wait(lambda r: r.offers)
        launch(driver, recorder.offers[0], "t-ack")
        recorder.wait(lambda r: states(r, "t-ack").count("TASK_RUNNING") >= 2)
        running = [u for u in recorder.updates if u["state"] == "TASK_RUNNING"]
        assert running[0]["uuid"] == running[1]["uuid"], "the same update, sent again"
        driver.acknowledgeStatusUpdate(running[0])
        time.sleep(5)  # more than two retry periods
        count = states(recorder, "t-ack").count("TASK_RUNNING")
        time.sleep(3)
        assert states(recorder, "t-ack").count("TASK_RUNNING") == count, "no resends after the acknowledgement"


def test_offers_are_rescinded_when_the_agents_disks_change(master, tmp_path):
    url, disk_root = master
    if disk_root is None:
        pytest.skip("against a real master the agent's resources are not this test's to change")
    recorder = Recorder()  # keeps its offers
    with framework(url, recorder):
        recorder.wait(lambda r: r.offers)
        resources_file = tmp_path / "resources.json"
        resources_file.write_text("[]")  # the disk went away (e.g. marked failed in disk-service)
        recorder.wait(lambda r: recorder.offers[0]["id"]["value"] in r.rescinded)
