"""Jobs: driver programs submitted to a running cluster. Their files live in
``<jobs_dir>/<job id>/`` (the driver sees it at ``/job``; what it writes to ``/job/output`` can be
downloaded until the cluster is destroyed); their state, exit code and logs stay in the ``jobs``
table."""
import base64
import binascii
import io
import re
import shutil
import tarfile
import uuid
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.errors import ApiError
from spindle_orchestrator.clusters import wake
from spindle_orchestrator.models import Cluster, Job

PENDING, RUNNING, SUCCEEDED, FAILED, KILLED = "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"
FINISHED = (SUCCEEDED, FAILED, KILLED)
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
MAX_FILES_BYTES = 64 * 2**20
# Logs kept per stream: the end of them, where the result and the error usually are.
MAX_LOG_CHARS = 1_000_000


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
    (folder / "output").mkdir(parents=True)
    for name, data in contents.items():
        (folder / name).write_bytes(data)
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


def finish(job: Job, state: str, message: str, exit_code: int | None = None, stdout: str = "",
           stderr: str = "") -> None:
    job.state, job.message, job.exit_code = state, message[:2000], exit_code
    job.stdout, job.stderr = stdout[-MAX_LOG_CHARS:], stderr[-MAX_LOG_CHARS:]
    job.finished_at = datetime.utcnow()


def remove_files(jobs_dir: Path, session: Session, cluster_id: str) -> int:
    """The cluster is destroyed: its jobs' files and outputs go too (their logs stay in the table)."""
    removed = 0
    for job in of_cluster(session, cluster_id):
        folder = job_dir(jobs_dir, job.id)
        if folder.exists():
            shutil.rmtree(folder)
            removed += 1
    return removed


def output_archive(jobs_dir: Path, job: Job) -> bytes:
    """What the driver wrote to /job/output, as a .tar.gz (an empty archive when it wrote nothing)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        folder = job_dir(jobs_dir, job.id) / "output"
        if folder.is_dir():
            tar.add(folder, arcname="output")
    return buffer.getvalue()
