"""Jobs of a cluster: submit a driver program, list, show with logs, download its output; and,
for the executors running jobs' drivers, the job's files and the way back for its result."""
import tempfile
from pathlib import Path
from typing import IO, Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.auth import Caller, require
from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator import clusters, jobs
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.api.routes.quotas import Quotas
from spindle_orchestrator.models import Job
from spindle_orchestrator.schemas import JobCreate, JobOut

router = APIRouter(prefix="/clusters/{cluster_id}/jobs", tags=["jobs"])


@router.post("", status_code=202, responses=error_responses(403, 404, 409, 422, descriptions={
    403: "the driver's floating IP would pass the owner's quota (QUOTA_EXCEEDED)"}))
def submit_job(cluster_id: str, body: JobCreate, session: SessionDep, request: Request, _: ServiceCaller) -> JobOut:
    """Accept a job for a RUNNING cluster; the worker starts its driver."""
    cluster = clusters.get_or_404(session, cluster_id)
    Quotas(request).admit_driver(session, cluster)  # its floating IP counts against the owner's quota
    job = jobs.create(session, request.app.state.settings.jobs_dir, cluster, body.owner, body.main, body.args,
                      body.files)
    return JobOut.of(job)


@router.get("")
def cluster_jobs(cluster_id: str, session: SessionDep, _: ServiceCaller) -> list[JobOut]:
    clusters.get_or_404(session, cluster_id)
    return [JobOut.of(j) for j in jobs.of_cluster(session, cluster_id)]


@router.get("/{job_id}")
def get_job(cluster_id: str, job_id: str, session: SessionDep, _: ServiceCaller) -> JobOut:
    """The job with its driver's stdout and stderr (kept after it ends)."""
    return JobOut.of(jobs.get_or_404(session, job_id, cluster_id), logs=True)


@router.get("/{job_id}/output", response_class=Response,
            responses={200: {"content": {"application/gzip": {}}, "description": "/job/output as .tar.gz"}})
def job_output(cluster_id: str, job_id: str, session: SessionDep, request: Request, _: ServiceCaller) -> Response:
    job = jobs.get_or_404(session, job_id, cluster_id)
    return Response(jobs.output_archive(request.app.state.settings.jobs_dir, job), media_type="application/gzip",
                    headers={"Content-Disposition": f'attachment; filename="{job.id}-output.tar.gz"'})


# --- for the executors of jobs' drivers (service role only; the api-server does not expose these) ---

internal_router = APIRouter(prefix="/internal/jobs/{job_id}", tags=["internal"])
ExecutorCaller = Annotated[Caller, Depends(require("service"))]
RESULT_ERRORS = error_responses(401, 403, 404, 409, 413, 422)


def _unfinished(session: Session, job_id: str, lock: bool = False) -> Job:
    query = select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
    job = session.scalar(query.with_for_update() if lock else query)
    if job is None:
        raise ApiError(404, "JOB_NOT_FOUND", f"no job {job_id}", {"job_id": job_id})
    if job.state in jobs.FINISHED:
        raise ApiError(409, "JOB_FINISHED", f"job {job_id} is {job.state}", {"job_id": job_id, "state": job.state})
    return job


@internal_router.get("/files", response_class=Response, responses={
    200: {"content": {"application/x-tar": {}}, "description": "the job's files, an uncompressed tar of plain names"},
    **error_responses(401, 403, 404, 409)})
def job_files(job_id: str, session: SessionDep, request: Request, _: ExecutorCaller) -> Response:
    """What the driver's executor unpacks as /job (the job must not have finished)."""
    job = _unfinished(session, job_id)
    return Response(jobs.files_archive(request.app.state.settings.jobs_dir, job), media_type="application/x-tar")


@internal_router.put("/result", status_code=204, response_class=Response, responses=RESULT_ERRORS)
async def job_result(job_id: str, request: Request, session: SessionDep, _: ExecutorCaller) -> Response:
    """The driver's executor puts back its result before the task ends: an uncompressed tar of
    ``result.json`` (``{"exit_code"}``), ``stdout``, ``stderr`` and ``output/…`` (at most
    ``jobs.MAX_RESULT_BYTES``, 413 beyond). Kept until the job ends (then 409 ``JOB_FINISHED``); a
    repeat replaces it."""
    limit = jobs.MAX_RESULT_BYTES
    too_large = ApiError(413, "RESULT_TOO_LARGE", f"a job's result is at most {limit} bytes", {"limit": limit})
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    await run_in_threadpool(_check_unfinished, session, job_id)
    received = 0
    with tempfile.SpooledTemporaryFile(max_size=8 * 2**20) as body:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise too_large
            body.write(chunk)
        body.seek(0)
        await run_in_threadpool(_keep_result, session, request.app.state.settings.jobs_dir, job_id, body)
    return Response(status_code=204)


def _check_unfinished(session: Session, job_id: str) -> None:
    """Refuse early (before the body comes), holding no transaction open while it does."""
    try:
        _unfinished(session, job_id)
    finally:
        session.rollback()


def _keep_result(session: Session, jobs_dir: Path, job_id: str, body: IO[bytes]) -> None:
    job = _unfinished(session, job_id, lock=True)
    result = jobs.store_result(jobs_dir, job_id, body)
    job.exit_code, job.stdout, job.stderr = result.exit_code, result.stdout, result.stderr
    ended = f"exited with {result.exit_code}" if result.exit_code is not None else "is gone"
    job.message = f"the driver {ended}; its result is back{': ' + result.note if result.note else ''}"[:2000]
    session.commit()
