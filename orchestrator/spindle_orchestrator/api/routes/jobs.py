"""Jobs of a cluster: submit a driver program, list, show with logs, download its output."""
from fastapi import APIRouter, Request, Response

from spindle_orchestrator import clusters, jobs
from spindle_orchestrator.api.deps import ServiceCaller, SessionDep
from spindle_orchestrator.schemas import JobCreate, JobOut

router = APIRouter(prefix="/clusters/{cluster_id}/jobs", tags=["jobs"])


@router.post("", status_code=202)
def submit_job(cluster_id: str, body: JobCreate, session: SessionDep, request: Request, _: ServiceCaller) -> JobOut:
    """Accept a job for a RUNNING cluster; the worker starts its driver."""
    cluster = clusters.get_or_404(session, cluster_id)
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
