"""A job's state from its driver's Mesos task (``jobs.step``), as a table: queued, running, each
end with and without the result the executor put back, a cluster going away, the time limit, a
task the scheduler lost; what a driver holds in offers; results that are not what an executor
puts back are refused without touching the job's output."""
import io
import tarfile
from datetime import datetime, timedelta
from types import SimpleNamespace

import pytest

from spindle_common.contracts import MemberState as M
from spindle_common.contracts import TaskView
from spindle_common.errors import ApiError
from spindle_orchestrator import jobs
from spindle_orchestrator.job_runner import deadline_of, held_cpus, lease_owner, stopping_reason
from spindle_orchestrator.jobs import FAILED, KILLED, PENDING, RUNNING, SUCCEEDED, Step, step


def task(state: M = M.TASK_RUNNING, message: str = "", kill_requested: bool = False) -> TaskView:
    return TaskView(task_id="job-j1.ab", cluster_id="c1", member_id="job-j1", state=state, message=message,
                    hostname="node-1", launches=1, kill_requested=kill_requested, kind="job")


DELETED = "the cluster was deleted"

CASES = [
    # (what, job state, exit code put back, task, stopping, timed out) → step
    ("queued: waiting for an offer", PENDING, None, task(M.PENDING), None, False,
     Step(PENDING, "driver queued: waiting for an offer")),
    ("queued, and the scheduler says why", PENDING, None, task(M.PENDING, "waiting for resources: vm: needs 1 cpus"),
     None, False, Step(PENDING, "driver queued: waiting for resources: vm: needs 1 cpus")),
    ("starting", PENDING, None, task(M.TASK_STARTING), None, False, Step(PENDING, "driver queued: TASK_STARTING")),
    ("its task runs: the job runs", PENDING, None, task(), None, False, Step(RUNNING, "driver running on node-1")),
    ("still running", RUNNING, None, task(), None, False, Step(RUNNING, "driver running on node-1")),
    ("its node is unreachable: it waits", RUNNING, None, task(M.TASK_UNREACHABLE, "node vm unreachable"), None, False,
     Step(RUNNING, "driver task TASK_UNREACHABLE: node vm unreachable")),
    ("exited 0", RUNNING, 0, task(M.TASK_FINISHED), None, False, Step(SUCCEEDED, "the driver exited with 0", 0)),
    ("exited 0, result lost on the way", RUNNING, None, task(M.TASK_FINISHED), None, False,
     Step(SUCCEEDED, "the driver exited with 0", 0)),
    ("exited 1", RUNNING, 1, task(M.TASK_FAILED, "the driver exited with 1"), None, False,
     Step(FAILED, "the driver exited with 1", 1)),
    ("could not start", PENDING, None, task(M.TASK_FAILED, "the driver could not start: image x is not on this node"),
     None, False, Step(FAILED, "the driver could not start: image x is not on this node")),
    ("its node was lost", RUNNING, None, task(M.TASK_LOST, "agent gone"), None, False,
     Step(FAILED, "the driver's task ended TASK_LOST: agent gone")),
    ("killed as its cluster is deleted", RUNNING, 137, task(M.TASK_KILLED, "killed by the framework"), DELETED, False,
     Step(KILLED, "the cluster was deleted while the job ran", 137)),
    ("killed before launch as its cluster is deleted", PENDING, None, task(M.TASK_KILLED, "killed before launch"),
     DELETED, False, Step(KILLED, "the cluster was deleted before the job started")),
    ("killed as its cluster failed", RUNNING, 137, task(M.TASK_KILLED), "the cluster failed", False,
     Step(KILLED, "the cluster failed while the job ran", 137)),
    ("its time is up: kill it", RUNNING, None, task(), None, True,
     Step(RUNNING, "driver running on node-1", kill=True)),
    ("its time is up, kill asked already", RUNNING, None, task(M.TASK_KILLING, kill_requested=True), None, True,
     Step(RUNNING, "driver task TASK_KILLING")),
    ("queued too long: kill it", PENDING, None, task(M.PENDING), None, True,
     Step(PENDING, "driver queued: waiting for an offer", kill=True)),
    ("killed as its time was up", RUNNING, 137, task(M.TASK_KILLED), None, True,
     Step(KILLED, "no result within 3600 s", 137)),
    ("killed by someone else", RUNNING, None, task(M.TASK_KILLED, "killed by the framework"), None, False,
     Step(KILLED, "the driver was killed: killed by the framework")),
    ("the scheduler lost a running driver", RUNNING, None, None, None, False,
     Step(FAILED, "the scheduler has no task for the job's driver")),
    ("the scheduler does not have a queued driver: hand it over again", PENDING, None, None, None, False,
     Step(PENDING, "handing the driver to the scheduler", submit=True)),
    ("… unless its cluster is going away", PENDING, None, None, DELETED, False,
     Step(PENDING, "handing the driver to the scheduler")),
]


@pytest.mark.parametrize("what,job_state,exit_code,driver,stopping,timed_out,expected", CASES,
                         ids=[c[0] for c in CASES])
def test_a_jobs_state_follows_its_drivers_task(what, job_state, exit_code, driver, stopping, timed_out, expected):
    assert step(job_state, exit_code, driver, stopping=stopping, timed_out=timed_out, timeout_s=3600) == expected


def test_only_ends_are_finished():
    assert [s for s in (PENDING, RUNNING, SUCCEEDED, FAILED, KILLED) if Step(s, "").finished] == [SUCCEEDED, FAILED,
                                                                                                   KILLED]


def test_a_driver_holds_little_in_offers_unless_told_to_hold_all():
    assert held_cpus(1.0, 0.05) == 0.05
    assert held_cpus(0.02, 0.05) == 0.02, "never more than the manifest gives it"
    assert held_cpus(1.0, 0) == 1.0


def test_why_a_clusters_jobs_stop():
    cluster = SimpleNamespace(delete_requested=False, state="RUNNING")
    assert stopping_reason(cluster) is None  # type: ignore[arg-type]
    assert stopping_reason(SimpleNamespace(delete_requested=True, state="RUNNING")) == DELETED  # type: ignore[arg-type]
    assert stopping_reason(SimpleNamespace(delete_requested=False, state="FAILED")) == "the cluster failed"  # type: ignore[arg-type]


def test_a_jobs_time_runs_from_its_start_or_else_its_submission():
    created = datetime(2026, 1, 1, 12, 0)
    queued = SimpleNamespace(created_at=created, started_at=None)
    running = SimpleNamespace(created_at=created, started_at=created + timedelta(minutes=5))
    assert deadline_of(queued, 60).isoformat() == "2026-01-01T12:01:00+00:00"  # type: ignore[arg-type]
    assert deadline_of(running, 60).isoformat() == "2026-01-01T12:06:00+00:00"  # type: ignore[arg-type]
    assert lease_owner("j1") == "job-j1"


# --- results put back ----------------------------------------------------------------------------


def archive(entries: dict[str, bytes], symlinks: dict[str, str] | None = None) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize("body,problem", [
    (archive({"result.json": b'{"exit_code": 0}', "output/../../evil": b"x"}), "outside of it"),
    (archive({"result.json": b'{"exit_code": 0}', "/etc/cron.d/x": b"x"}), "outside of it"),
    (archive({"result.json": b'{"exit_code": 0}'}, symlinks={"output/link": "/etc/passwd"}), "plain files"),
    (archive({"result.json": b'{"exit_code": 0}', "elsewhere": b"x"}), "plain files"),
    (archive({"result.json": b'{"exit_code": "zero"}'}), "exit_code"),
    (archive({"stdout": b"no result.json"}), "exit_code"),
    (io.BytesIO(b"not a tar" * 100), "not a tar archive"),
])
def test_results_that_are_not_an_executors_are_refused_and_leave_the_output_alone(tmp_path, body, problem):
    (tmp_path / "j1" / "output").mkdir(parents=True)
    (tmp_path / "j1" / "output" / "kept").write_text("earlier")
    with pytest.raises(ApiError) as refused:
        jobs.store_result(tmp_path, "j1", body)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_RESULT") and problem in refused.value.message
    assert [p.name for p in (tmp_path / "j1").iterdir()] == ["output"]
    assert (tmp_path / "j1" / "output" / "kept").read_text() == "earlier"


def test_a_result_without_output_leaves_an_empty_one(tmp_path):
    (tmp_path / "j1" / "output").mkdir(parents=True)
    result = jobs.store_result(tmp_path, "j1", archive({"result.json": b'{"exit_code": null, "note": "gone"}',
                                                        "stderr": "é".encode()}))
    assert result == jobs.Result(None, "", "é", "gone", 0)
    assert list((tmp_path / "j1" / "output").iterdir()) == []
