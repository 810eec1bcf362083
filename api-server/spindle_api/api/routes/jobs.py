"""Jobs on a cluster: submit a driver program (its files uploaded as base64), list them, read one
with its logs, download what it wrote to /job/output. Same visibility as the cluster itself."""
from typing import Annotated

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from spindle_api.api.deps import CurrentUser, OrchestratorDep
from spindle_api.api.params import ClusterId, JobId, Product, Username, Version, segment
from spindle_api.api.routes.clusters import CLUSTER_ERRORS, NOT_VISIBLE, visible_cluster
from spindle_api.schemas import Job, upstream_list, upstream_model
from spindle_common.errors import error_responses

router = APIRouter(prefix="/clusters/{username}/{product}/{version}/{cluster_id}/jobs", tags=["jobs"])

# Plain file names, as the orchestrator accepts them.
FILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
FileName = Annotated[str, Field(pattern=FILE_NAME_PATTERN)]

JOB_NOT_VISIBLE = f"{NOT_VISIBLE}; or the cluster has no such job (JOB_NOT_FOUND)"


class JobSubmit(BaseModel):
    main: FileName = Field(description="which uploaded file the driver runs", examples=["wordcount.py"])
    args: list[Annotated[str, Field(max_length=65536, pattern=r"^[^\x00]*$")]] = Field(
        default=[], max_length=256, description="arguments after the main file")
    files: dict[FileName, Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]*={0,2}$")]] = Field(min_length=1, max_length=64,
                                       description="file name → base64 content: the main file and any .py/.so it needs")


@router.post("", status_code=202,
             responses={202: {"headers": {"Location": {"description": "the job's address",
                                                       "schema": {"type": "string"}}},
                              "description": "accepted: the job (PENDING), to follow at Location"},
                        **error_responses(400, 401, 403, 404, 409, 413, 422, 502, 503, descriptions={
                            403: "the driver's floating IP would pass the owner's quota (QUOTA_EXCEEDED)",
                            404: NOT_VISIBLE, 409: "the cluster is not RUNNING (CLUSTER_NOT_RUNNING)",
                            413: "the request, or the job's decoded files, are too large (REQUEST_TOO_LARGE, "
                                 "FILES_TOO_LARGE)",
                            422: "a parameter or the body is not valid (VALIDATION_FAILED), a file is not base64 "
                                 "(INVALID_FILE) or the main file is not among the files (MAIN_NOT_UPLOADED)"})})
def submit_job(username: Username, product: Product, version: Version, cluster_id: ClusterId, body: JobSubmit,
               user: CurrentUser, orchestrator: OrchestratorDep, response: Response) -> Job:
    """Run a driver program against the (RUNNING) cluster; follow it at ``Location``."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    job = upstream_model(Job, orchestrator.request("POST", f"/clusters/{segment(cluster_id)}/jobs",
                                                   json={"owner": user.username, **body.model_dump()}))
    response.headers["Location"] = (f"/clusters/{username}/{product}/{version}/{cluster_id}/jobs/{segment(job.id)}")
    return job


@router.get("", responses=CLUSTER_ERRORS)
def list_jobs(username: Username, product: Product, version: Version, cluster_id: ClusterId, user: CurrentUser,
              orchestrator: OrchestratorDep) -> list[Job]:
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return upstream_list(Job, orchestrator.request("GET", f"/clusters/{segment(cluster_id)}/jobs"))


@router.get("/{job_id}", responses=error_responses(401, 404, 422, 502, 503, descriptions={404: JOB_NOT_VISIBLE}))
def get_job(username: Username, product: Product, version: Version, cluster_id: ClusterId, job_id: JobId,
            user: CurrentUser, orchestrator: OrchestratorDep) -> Job:
    """The job: state, exit code, and the driver's stdout and stderr (kept after it ends)."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return upstream_model(Job, orchestrator.request("GET", f"/clusters/{segment(cluster_id)}/jobs/{segment(job_id)}"))


@router.get("/{job_id}/output", response_class=Response,
            responses={200: {"content": {"application/gzip": {"schema": {"type": "string", "format": "binary"}}},
                             "description": "/job/output as .tar.gz"},
                       **error_responses(401, 404, 422, 502, 503, descriptions={404: JOB_NOT_VISIBLE})})
def job_output(username: Username, product: Product, version: Version, cluster_id: ClusterId, job_id: JobId,
               user: CurrentUser, orchestrator: OrchestratorDep) -> Response:
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    answer = orchestrator.request_raw("GET", f"/clusters/{segment(cluster_id)}/jobs/{segment(job_id)}/output")
    return Response(answer.content, media_type="application/gzip",
                    headers={"Content-Disposition": answer.headers.get("content-disposition", "attachment")})
