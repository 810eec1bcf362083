"""Jobs of a cluster: submit a driver program, list, show with logs, download its output; and,
for the executors running jobs' drivers, the job's files and the way back for its result. Bodies
that may be large stream: a submission is counted as it arrives (413 past ``MAX_SUBMIT_BYTES``), a
result is written to a file in the job's folder as it arrives (413 past the result's limit), and
the output is sent from its file."""
import tempfile
from pathlib import Path
from typing import IO, Annotated

from fastapi import APIRouter, Depends, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_common.auth import Caller, require
from spindle_common.errors import ApiError, error_responses
from spindle_orchestrator import clusters, jobs
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.api.routes.quotas import Quotas
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.models import Job
from spindle_orchestrator.schemas import JobCreate, JobOut

router = APIRouter(prefix="/clusters/{cluster_id}/jobs", tags=["jobs"])


async def _bounded_body(request: Request, limit: int, too_large: ApiError) -> bytes:
    """The request's body, refused (413) as soon as it says or turns out to be over ``limit``."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise too_large
    return bytes(body)


@router.post("", status_code=202, response_model=JobOut, openapi_extra={
    "requestBody": {"required": True, "content": {"application/json": {"schema": JobCreate.model_json_schema()}}}},
    responses=error_responses(403, 404, 409, 413, 422, descriptions={
        403: "the driver's floating IP would pass the owner's quota (QUOTA_EXCEEDED)"}))
async def submit_job(cluster_id: str, session: SessionDep, request: Request, _: ServiceCaller) -> JobOut:
    """Accept a job for a RUNNING cluster; the worker starts its driver. Its body (the files as
    base64) is at most ``jobs.MAX_SUBMIT_BYTES``: 413 ``REQUEST_TOO_LARGE`` beyond, read no further."""
    limit = jobs.MAX_SUBMIT_BYTES
    raw = await _bounded_body(request, limit, ApiError(
        413, "REQUEST_TOO_LARGE", f"a job's submission is at most {limit} bytes", {"limit": limit}))
    try:
        body = JobCreate.model_validate_json(raw)
    except ValidationError as exc:  # as FastAPI answers a body it parsed itself
        raise RequestValidationError(exc.errors(include_url=False)) from None
    return await run_in_threadpool(_create, session, request.app.state.settings.jobs_dir, cluster_id, body,
                                   Quotas(request))


def _create(session: Session, jobs_dir: Path, cluster_id: str, body: JobCreate, q: Quotas) -> JobOut:
    cluster = clusters.get_or_404(session, cluster_id)
    q.admit_driver(session, cluster)  # its floating IP counts against the owner's quota (403 QUOTA_EXCEEDED)
    return JobOut.of(jobs.create(session, jobs_dir, cluster, body.owner, body.main, body.args, body.files))


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
    """Sent from the archive made when the result came back, never read whole into memory."""
    job = jobs.get_or_404(session, job_id, cluster_id)
    archive = jobs.output_archive(request.app.state.settings.jobs_dir, job)
    name = f"{job.id}-output.tar.gz"
    if archive is None:  # its files went with its cluster
        return Response(jobs.empty_output_archive(), media_type="application/gzip",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})
    return FileResponse(archive, media_type="application/gzip", filename=name)


# --- for the executors of jobs' drivers (service role only; the api-server does not expose these) ---

internal_router = APIRouter(prefix="/internal/jobs/{job_id}", tags=["internal"])
ExecutorCaller = Annotated[Caller, Depends(require("service", "node"))]  # executors sign as nodes
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
    """What the driver's executor unpacks as /job (the job must not have finished), with what it may
    put back: ``X-Spindle-Log-Max-Bytes`` of each log's end and ``X-Spindle-Output-Max-Bytes`` of output."""
    job = _unfinished(session, job_id)
    settings = request.app.state.settings
    return Response(jobs.files_archive(settings.jobs_dir, job), media_type="application/x-tar",
                    headers={"X-Spindle-Log-Max-Bytes": str(settings.job_log_max_bytes),
                             "X-Spindle-Output-Max-Bytes": str(_output_limit(settings))})


def _output_limit(settings: Settings) -> int:
    return settings.job_output_max_mb * 2**20


@internal_router.put("/result", status_code=204, response_class=Response, responses=RESULT_ERRORS)
async def job_result(job_id: str, request: Request, session: SessionDep, _: ExecutorCaller) -> Response:
    """The driver's executor puts back its result before the task ends: an uncompressed tar of
    ``result.json`` (``{"exit_code"}``), ``stdout``, ``stderr`` and ``output/…``, at most both logs'
    ends and ``SPINDLE_JOB_OUTPUT_MAX_MB`` of output (413 ``RESULT_TOO_LARGE`` beyond, read no further).
    It is written to a file in the job's folder as it arrives. Kept until the job ends (then 409
    ``JOB_FINISHED``); a repeat replaces it."""
    settings = request.app.state.settings
    output_limit = _output_limit(settings)
    limit = jobs.result_limit(settings.job_log_max_bytes, output_limit)
    too_large = ApiError(413, "RESULT_TOO_LARGE", f"a job's output is at most {settings.job_output_max_mb} MB "
                         f"(SPINDLE_JOB_OUTPUT_MAX_MB), its result at most {limit} bytes",
                         {"limit": limit, "output_limit": output_limit})
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise too_large
    await run_in_threadpool(_check_unfinished, session, job_id)
    received = 0
    folder = jobs.job_dir(settings.jobs_dir, job_id)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder, prefix=".result-") as body:  # gone however this ends
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise too_large
            body.write(chunk)
        body.seek(0)
        await run_in_threadpool(_keep_result, session, settings, job_id, body)
    return Response(status_code=204)


def _check_unfinished(session: Session, job_id: str) -> None:
    """Refuse early (before the body comes), holding no transaction open while it does."""
    try:
        _unfinished(session, job_id)
    finally:
        session.rollback()


def _keep_result(session: Session, settings: Settings, job_id: str, body: IO[bytes]) -> None:
    job = _unfinished(session, job_id, lock=True)
    result = jobs.store_result(settings.jobs_dir, job_id, body, settings.job_log_max_bytes)
    job.exit_code, job.stdout, job.stderr = result.exit_code, result.stdout, result.stderr
    ended = f"exited with {result.exit_code}" if result.exit_code is not None else "is gone"
    job.message = f"the driver {ended}; its result is back{': ' + result.note if result.note else ''}"[:2000]
    session.commit()
