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
    ("exited 0, its output left out: the executor says so", RUNNING, 0,
     task(M.TASK_FINISHED, "the driver exited with 0; the output was not kept: over the limit"), None, False,
     Step(SUCCEEDED, "the driver exited with 0; the output was not kept: over the limit", 0)),
    ("exited 2, its output left out", RUNNING, 2,
     task(M.TASK_FAILED, "the driver exited with 2; the output was not kept"), None, False,
     Step(FAILED, "the driver exited with 2; the output was not kept", 2)),
    ("exited 0, a message that is not the executor's", RUNNING, 0, task(M.TASK_FINISHED, "the driver exited with 07"),
     None, False, Step(SUCCEEDED, "the driver exited with 0", 0)),
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


def kept_output(folder) -> dict[str, bytes | None]:
    """What the job's output.tar.gz holds: name → content (None: a folder)."""
    with tarfile.open(folder / jobs.OUTPUT_ARCHIVE, mode="r:gz") as tar:
        return {m.name: (tar.extractfile(m).read() if m.isfile() else None) for m in tar}  # type: ignore[union-attr]


def earlier_output(tmp_path) -> None:
    (tmp_path / "j1").mkdir()
    jobs._write_output_archive(tmp_path / "j1", lambda tar: tar.add(__file__, arcname="output/earlier"))


@pytest.mark.parametrize("body,problem", [
    (archive({"result.json": b'{"exit_code": 0}', "output": b"a file"}), "not a folder"),
    (archive({"result.json": b'{"exit_code": 0}', "output/../../evil": b"x"}), "outside of it"),
    (archive({"result.json": b'{"exit_code": 0}', "/etc/cron.d/x": b"x"}), "outside of it"),
    (archive({"result.json": b'{"exit_code": 0}'}, symlinks={"output/link": "/etc/passwd"}), "plain files"),
    (archive({"result.json": b'{"exit_code": 0}', "elsewhere": b"x"}), "plain files"),
    (archive({"result.json": b'{"exit_code": "zero"}'}), "exit_code"),
    (archive({"stdout": b"no result.json"}), "exit_code"),
    (io.BytesIO(b"not a tar" * 100), "not a tar archive"),
])
def test_results_that_are_not_an_executors_are_refused_and_leave_the_output_alone(tmp_path, body, problem):
    earlier_output(tmp_path)
    with pytest.raises(ApiError) as refused:
        jobs.store_result(tmp_path, "j1", body)
    assert (refused.value.status, refused.value.code) == (422, "INVALID_RESULT") and problem in refused.value.message
    assert [p.name for p in (tmp_path / "j1").iterdir()] == [jobs.OUTPUT_ARCHIVE]  # no partial archive left
    assert list(kept_output(tmp_path / "j1")) == ["output", "output/earlier"]


def test_a_result_without_output_leaves_an_empty_one(tmp_path):
    earlier_output(tmp_path)
    result = jobs.store_result(tmp_path, "j1", archive({"result.json": b'{"exit_code": null, "note": "gone"}',
                                                        "stderr": "é".encode()}))
    assert result == jobs.Result(None, "", "é", "gone", 0)
    assert kept_output(tmp_path / "j1") == {"output": None}


def test_an_output_is_copied_into_its_archive_file_by_file_with_nothing_of_the_node(tmp_path):
    (tmp_path / "j1").mkdir()
    body = io.BytesIO()
    with tarfile.open(fileobj=body, mode="w") as tar:
        for name, data, mode in (("result.json", b'{"exit_code": 0}', 0o644), ("output/sub/part-0", b"\x00" * 70000,
                                                                                 0o4755)):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.uname = len(data), mode, 1234, "someone"
            tar.addfile(info, io.BytesIO(data))
    body.seek(0)
    result = jobs.store_result(tmp_path, "j1", body)
    assert result.output_files == 1
    assert kept_output(tmp_path / "j1") == {"output": None, "output/sub/part-0": b"\x00" * 70000}
    with tarfile.open(tmp_path / "j1" / jobs.OUTPUT_ARCHIVE, mode="r:gz") as tar:
        part = tar.getmember("output/sub/part-0")
    assert (part.mode, part.uid, part.uname) == (0o755, 0, "")  # no set-id bit, no owner of the node's


@pytest.mark.parametrize("log,limit,kept", [
    (b"short", 10, "short"),
    (b"exactly 10", 10, "exactly 10"),
    (b"0123456789END", 10, jobs.cut_marker("stdout", 10) + "3456789END"),
    ("é".encode() * 6, 5, jobs.cut_marker("stdout", 5) + "\ufffdéé"),  # cut inside a character
])
def test_only_the_end_of_a_log_is_read_and_a_cut_one_says_so(tmp_path, log, limit, kept):
    (tmp_path / "j1").mkdir()
    result = jobs.store_result(tmp_path, "j1", archive({"result.json": b'{"exit_code": 0}', "stdout": log}), limit)
    assert result.stdout == kept


def test_a_result_is_at_most_both_logs_the_output_and_a_little_more():
    assert jobs.result_limit(1000, 5000) == 2 * 1000 + 5000 + jobs.RESULT_OVERHEAD_BYTES


def test_the_output_download_is_a_file_made_once(tmp_path):
    job = SimpleNamespace(id="j1")
    assert jobs.output_archive(tmp_path, job) is None  # type: ignore[arg-type]  # its files went with its cluster
    with tarfile.open(fileobj=io.BytesIO(jobs.empty_output_archive()), mode="r:gz") as tar:
        assert tar.getnames() == ["output"]
    (tmp_path / "j1" / "output").mkdir(parents=True)  # kept by an orchestrator from before archives
    (tmp_path / "j1" / "output" / "part").write_text("old")
    made = jobs.output_archive(tmp_path, job)  # type: ignore[arg-type]
    assert made == tmp_path / "j1" / jobs.OUTPUT_ARCHIVE
    assert kept_output(tmp_path / "j1") == {"output": None, "output/part": b"old"}
    made.write_bytes(b"the same file")
    assert jobs.output_archive(tmp_path, job) == made and made.read_bytes() == b"the same file"  # type: ignore[arg-type]
