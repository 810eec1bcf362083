"""Jobs: driver programs submitted to a running cluster. Their files live in
``<jobs_dir>/<job id>/`` on the orchestrator; the driver's executor fetches them (the driver sees
them at ``/job``) and puts the result back: exit code, the end of its logs, and what it wrote to
``/job/output`` (kept as ``<jobs_dir>/<job id>/output.tar.gz``, made once as the result streams in,
downloadable until the cluster is destroyed). Their state, exit code and logs stay in the ``jobs``
table. Nothing of a result is ever held whole in memory: it streams to a file in the job's folder,
each log is read from its end (at most ``log_max_bytes``, marked when cut) and the output is copied
file by file into the archive. ``step`` decides a job's state from its driver's Mesos task (pure)."""
import base64
import binascii
import io
import json
import os
import re
import shutil
import tarfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import IO

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.contracts import TERMINAL_TASK_STATES, MemberState, TaskView
from spindle_common.errors import ApiError
from spindle_orchestrator.clusters import wake
from spindle_orchestrator.models import Cluster, Job

PENDING, RUNNING, SUCCEEDED, FAILED, KILLED = "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"
FINISHED = (SUCCEEDED, FAILED, KILLED)
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_FILES_BYTES = 64 * 2**20
# A job's submission as the orchestrator reads it: its files as base64 in JSON (the api-server's own
# limit is a little lower: it adds the owner).
MAX_SUBMIT_BYTES = 100 * 2**20
# Logs kept per stream: the end of them, where the result and the error usually are.
MAX_LOG_CHARS = 1_000_000
# What /job/output is kept as: made once, when its result comes back (fast: the executor waits).
OUTPUT_ARCHIVE = "output.tar.gz"
OUTPUT_GZIP_LEVEL = 1
# result.json and the tar's own headers and padding, beyond the logs and the output.
RESULT_OVERHEAD_BYTES = 1 << 20


def result_limit(log_max_bytes: int, output_max_bytes: int) -> int:
    """The largest result an executor may put back: both logs' ends, the output and the rest."""
    return 2 * log_max_bytes + output_max_bytes + RESULT_OVERHEAD_BYTES


def cut_marker(stream: str, limit: int) -> str:
    """The line a log starts with when only its end is kept."""
    return f"[spindle: the driver's {stream} is longer than {limit} bytes; only its end is kept]\n"


def job_dir(jobs_dir: Path, job_id: str) -> Path:
    return jobs_dir / job_id


def _decoded(files: dict[str, str]) -> dict[str, bytes]:
    decoded, total = {}, 0
    for name, data in files.items():
        if not FILE_NAME.match(name):
            raise ApiError(422, "INVALID_FILE_NAME",
                           f"file name {name!r} must be a plain name (letters, digits, . _ -)", {"file": name})
        try:
            decoded[name] = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(422, "INVALID_FILE", f"file {name!r} is not base64", {"file": name}) from None
        total += len(decoded[name])
    if total > MAX_FILES_BYTES:
        raise ApiError(413, "FILES_TOO_LARGE", f"the job's files are {total} bytes; at most {MAX_FILES_BYTES}",
                       {"bytes": total, "limit": MAX_FILES_BYTES})
    return decoded


def create(session: Session, jobs_dir: Path, cluster: Cluster, owner: str, main: str, args: list[str],
           files: dict[str, str]) -> Job:
    """Accept a job for a RUNNING cluster; its files are written before the row commits."""
    if cluster.state != "RUNNING" or cluster.delete_requested:
        raise ApiError(409, "CLUSTER_NOT_RUNNING",
                       f"cluster {cluster.id} is {cluster.state}; jobs run on RUNNING clusters",
                       {"cluster_id": cluster.id, "state": cluster.state})
    contents = _decoded(files)
    if main not in contents:
        raise ApiError(422, "MAIN_NOT_UPLOADED", f"the main file {main!r} is not among the uploaded files",
                       {"main": main, "files": sorted(contents)})
    job = Job(id="j" + uuid.uuid4().hex[:10], cluster_id=cluster.id, owner=owner, state=PENDING, main=main,
              args=args, files=sorted(contents), message="waiting for the job runner", stdout="", stderr="")
    folder = job_dir(jobs_dir, job.id)
    folder.mkdir(parents=True)
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    _write_output_archive(folder, None)  # nothing yet: an empty archive until the result comes
    session.add(job)
    wake(session, cluster.id)  # the worker starts its driver as soon as this commits
    session.commit()
    return job


def get_or_404(session: Session, job_id: str, cluster_id: str | None = None) -> Job:
    job = session.get(Job, job_id)
    if job is None or (cluster_id is not None and job.cluster_id != cluster_id):
        raise ApiError(404, "JOB_NOT_FOUND", f"no job {job_id}", {"job_id": job_id})
    return job


def of_cluster(session: Session, cluster_id: str) -> list[Job]:
    return list(session.scalars(select(Job).where(Job.cluster_id == cluster_id).order_by(Job.created_at)))


def in_state(session: Session, *states: str) -> list[Job]:
    return list(session.scalars(select(Job).where(Job.state.in_(states)).order_by(Job.created_at)))


def finish(job: Job, state: str, message: str, exit_code: int | None = None, stdout: str | None = None,
           stderr: str | None = None) -> None:
    """The job ends; logs not given stay as its driver's executor put them back."""
    job.state, job.message, job.exit_code = state, message[:2000], exit_code
    if stdout is not None:
        job.stdout = stdout[-MAX_LOG_CHARS:]
    if stderr is not None:
        job.stderr = stderr[-MAX_LOG_CHARS:]
    job.finished_at = datetime.utcnow()


# --- what a job's driver task means for the job (pure) -------------------------------------------


@dataclass(frozen=True)
class Step:
    """The job's state and message from now on, and what to do about its driver's task."""

    state: str
    message: str
    exit_code: int | None = None
    kill: bool = False  # its time is up: kill the task
    submit: bool = False  # the scheduler does not have the task: hand it over (again)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


def step(job_state: str, exit_code: int | None, task: TaskView | None, *, stopping: str | None = None,
         timed_out: bool = False, timeout_s: float = 0.0) -> Step:
    """A job (PENDING or RUNNING, its driver handed to the scheduler) as its driver's task says.

    ``exit_code``: what the executor put back (None: nothing yet); ``stopping``: why the cluster's
    jobs are being stopped ("the cluster was deleted"), if they are; ``timed_out``: the job has run
    (or waited) longer than ``timeout_s``."""
    if task is None:
        if job_state == RUNNING:
            return Step(FAILED, "the scheduler has no task for the job's driver", exit_code)
        return Step(PENDING, "handing the driver to the scheduler", submit=stopping is None)
    state = task.state
    if state not in TERMINAL_TASK_STATES:
        kill = timed_out and not task.kill_requested  # (stopping: the StopJobs action kills)
        if state == MemberState.TASK_RUNNING:
            return Step(RUNNING, f"driver running on {task.hostname or 'its node'}", kill=kill)
        if job_state == RUNNING:  # e.g. TASK_KILLING, or its node unreachable
            return Step(RUNNING, f"driver task {state.value}{': ' + task.message if task.message else ''}", kill=kill)
        waiting = task.message or {MemberState.PENDING: "waiting for an offer"}.get(state, state.value)
        return Step(PENDING, f"driver queued: {waiting}", kill=kill)
    if state == MemberState.TASK_FINISHED:
        return Step(SUCCEEDED, _exited(task, 0), 0 if exit_code is None else exit_code)
    if state == MemberState.TASK_KILLED:
        if stopping:
            started = job_state == RUNNING or exit_code is not None
            return Step(KILLED, f"{stopping} {'while the job ran' if started else 'before the job started'}",
                        exit_code)
        if timed_out:
            return Step(KILLED, f"no result within {timeout_s:.0f} s", exit_code)
        return Step(KILLED, f"the driver was killed: {task.message or 'by Spindle'}", exit_code)
    if state == MemberState.TASK_FAILED and exit_code is not None:
        return Step(FAILED, _exited(task, exit_code), exit_code)
    if state == MemberState.TASK_FAILED and task.message:
        return Step(FAILED, task.message, exit_code)
    return Step(FAILED, f"the driver's task ended {state.value}{': ' + task.message if task.message else ''}",
                exit_code)


def _exited(task: TaskView, exit_code: int) -> str:
    """How the driver ended: its executor's own words when they say it (with what it adds, e.g. an
    output left out as too large), else the exit code alone."""
    plain = f"the driver exited with {exit_code}"
    return task.message if task.message == plain or task.message.startswith(plain + ";") else plain


# --- files out to the driver's executor, its result back ------------------------------------------


def files_archive(jobs_dir: Path, job: Job) -> bytes:
    """The job's files as an uncompressed tar of plain names (its executor unpacks it as /job)."""
    buffer = io.BytesIO()
    folder = job_dir(jobs_dir, job.id)
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in job.files:
            tar.add(folder / name, arcname=name, recursive=False)
    return buffer.getvalue()


@dataclass(frozen=True)
class Result:
    exit_code: int | None
    stdout: str
    stderr: str
    note: str = ""
    output_files: int = 0


def _invalid(message: str) -> ApiError:
    return ApiError(422, "INVALID_RESULT", message)


def _text_tail(tar: tarfile.TarFile, member: tarfile.TarInfo, stream: str, limit: int) -> str:
    """The end of a log: its last ``limit`` bytes (only they are read), after a marker if cut (an
    executor that already cut it starts it with its own marker)."""
    source = tar.extractfile(member)
    assert source is not None  # a regular file
    if member.size <= limit:
        return source.read().decode(errors="replace")
    source.seek(member.size - limit)
    return cut_marker(stream, limit) + source.read(limit).decode(errors="replace")


def _write_output_archive(folder: Path, fill: Callable[[tarfile.TarFile], None] | None) -> None:
    """``output.tar.gz`` of the job's folder, replaced at once (a download in flight keeps the old
    one): an ``output`` folder, with what ``fill`` adds to it."""
    partial = folder / f".{OUTPUT_ARCHIVE}-{uuid.uuid4().hex[:8]}"
    try:
        with tarfile.open(partial, mode="w:gz", compresslevel=OUTPUT_GZIP_LEVEL) as tar:
            top = tarfile.TarInfo("output")
            top.type, top.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(top)
            if fill is not None:
                fill(tar)
        os.replace(partial, folder / OUTPUT_ARCHIVE)
    finally:
        partial.unlink(missing_ok=True)


def _plain(member: tarfile.TarInfo, name: str) -> tarfile.TarInfo:
    """A copy of an output entry with nothing of the node's: no owner, no set-id bits."""
    info = tarfile.TarInfo(name)
    info.type, info.size, info.mtime = member.type, member.size if member.isfile() else 0, member.mtime
    info.mode = member.mode & 0o777
    return info


def store_result(jobs_dir: Path, job_id: str, archive: IO[bytes], log_max_bytes: int = MAX_LOG_CHARS) -> Result:
    """Read a result an executor put back (uncompressed tar: ``result.json`` with ``exit_code``,
    ``stdout``, ``stderr``, ``output/…`` of plain files and folders) and keep its output as the
    job's ``output.tar.gz`` (replacing what an earlier try put there), copying it file by file.
    Anything else: 422, and the job's output stays as it was."""
    folder = job_dir(jobs_dir, job_id)
    found: dict[str, object] = {}
    summary: dict[str, object] = {}
    files = 0

    def read(tar: tarfile.TarFile, out: tarfile.TarFile) -> None:
        nonlocal files, summary
        for member in tar:
            path = PurePosixPath(member.name.removeprefix("./"))
            if path.is_absolute() or ".." in path.parts or not path.parts:
                raise _invalid(f"the result holds {member.name!r}, outside of it")
            if str(path) in ("result.json", "stdout", "stderr") and member.isfile():
                if str(path) == "result.json":
                    if member.size > 65536:
                        raise _invalid("result.json is too large")
                    source = tar.extractfile(member)
                    assert source is not None
                    found["result"] = source.read()
                else:
                    found[str(path)] = _text_tail(tar, member, str(path), log_max_bytes)
            elif path.parts[0] == "output" and (member.isfile() or member.isdir()):
                if len(path.parts) == 1:
                    if member.isdir():
                        continue  # the archive has its own top folder
                    raise _invalid("the result's output is a file, not a folder")
                out.addfile(_plain(member, str(path)), tar.extractfile(member) if member.isfile() else None)
                files += member.isfile()
            else:
                raise _invalid(f"the result holds {member.name!r}: only result.json, stdout, stderr and "
                               "plain files and folders under output/")
        try:
            told = json.loads(found["result"]) if "result" in found else None  # type: ignore[arg-type]
        except ValueError:
            told = None
        if not isinstance(told, dict) or not isinstance(told.get("exit_code", 0), int | None):
            raise _invalid("result.json must be an object with exit_code (an integer or null)")
        summary = told

    try:
        with tarfile.open(fileobj=archive, mode="r:") as tar:
            _write_output_archive(folder, lambda out: read(tar, out))
    except tarfile.TarError as exc:
        raise _invalid(f"the result is not a tar archive: {exc}") from None
    exit_code = summary.get("exit_code")
    assert exit_code is None or isinstance(exit_code, int)
    return Result(exit_code, str(found.get("stdout", "")), str(found.get("stderr", "")),
                  str(summary.get("note") or "")[:500], files)


def remove_files(jobs_dir: Path, session: Session, cluster_id: str) -> int:
    """The cluster is destroyed: its jobs' files and outputs go too (their logs stay in the table)."""
    removed = 0
    for job in of_cluster(session, cluster_id):
        folder = job_dir(jobs_dir, job.id)
        if folder.exists():
            shutil.rmtree(folder)
            removed += 1
    return removed


def output_archive(jobs_dir: Path, job: Job) -> Path | None:
    """The file holding what the driver wrote to /job/output, as a .tar.gz (an empty archive until
    its result is back), made now for a job kept from before archives were (None: the job's files
    are gone with its cluster)."""
    folder = job_dir(jobs_dir, job.id)
    archive = folder / OUTPUT_ARCHIVE
    if not archive.exists() and folder.is_dir():
        legacy = folder / "output"
        _write_output_archive(folder, (lambda tar: tar.add(legacy, arcname="output")) if legacy.is_dir() else None)
    return archive if archive.exists() else None


def empty_output_archive() -> bytes:
    """An empty .tar.gz of an ``output`` folder (a job whose files are gone)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        top = tarfile.TarInfo("output")
        top.type, top.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(top)
    return buffer.getvalue()
