"""Jobs on a cluster: submit a driver program (its files uploaded as base64; the body is bounded at
the edge by ``body_limit``), list them, read one with its logs, download what it wrote to
/job/output (passed through from the orchestrator as it arrives, never held whole). Same
visibility as the cluster itself."""
from collections.abc import Iterator
from typing import Annotated

import httpx
from fastapi import APIRouter, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from spindle_api.api.deps import CurrentUser, OrchestratorDep, SettingsDep
from spindle_api.api.params import ClusterId, JobId, Product, Username, Version, segment
from spindle_api.api.routes.clusters import CLUSTER_ERRORS, NOT_VISIBLE, visible_cluster
from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.schemas import Job, upstream_list, upstream_model
from spindle_api.upstream import actor_of
from spindle_common.auth import internal_headers
from spindle_common.errors import ApiError, error_responses
from spindle_common.tls import default_tls

router = APIRouter(prefix="/clusters/{username}/{product}/{version}/{cluster_id}/jobs", tags=["jobs"])

# Plain file names, as the orchestrator accepts them.
FILE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
FileName = Annotated[str, Field(pattern=FILE_NAME_PATTERN)]

# An output download passes through in chunks of this size.
STREAM_CHUNK = 1 << 20

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
               user: CurrentUser, orchestrator: OrchestratorDep, settings: SettingsDep) -> Response:
    """The archive, streamed: however large the output, it passes through in chunks."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    orchestrator.close()  # the stream has its own client
    client, upstream = _open_stream(settings, user, f"/clusters/{segment(cluster_id)}/jobs/{segment(job_id)}/output")
    headers = {"Content-Disposition": upstream.headers.get("content-disposition", "attachment")}
    if "content-length" in upstream.headers:
        headers["Content-Length"] = upstream.headers["content-length"]

    def body() -> Iterator[bytes]:
        try:
            yield from upstream.iter_raw(STREAM_CHUNK)
        finally:  # sent, or the caller went away
            upstream.close()
            client.close()
    return StreamingResponse(body(), media_type="application/gzip", headers=headers)


def _open_stream(settings: Settings, user: User, path: str) -> tuple[httpx.Client, httpx.Response]:
    """The orchestrator's successful answer at ``path`` with its body still to be read (and its
    client, to close after it); its refusal as the ``ApiError`` it names (its own failures: 502)."""
    client = httpx.Client(base_url=settings.orchestrator_url, timeout=httpx.Timeout(30.0, read=120.0),
                          headers=internal_headers(settings.internal_token, actor_of(user), "service"),
                          verify=default_tls())
    try:
        upstream = client.send(client.build_request("GET", path), stream=True)
    except httpx.HTTPError as exc:
        client.close()
        raise ApiError(503, "SERVICE_UNAVAILABLE", f"the orchestrator is unreachable: {exc}",
                       {"service": "orchestrator"}) from exc
    if upstream.is_success:
        return client, upstream
    try:
        upstream.read()
        error = upstream.json()["error"]
        refusal = ApiError(upstream.status_code, error["code"], error["message"], error.get("details") or {})
    except (ValueError, KeyError, TypeError, httpx.HTTPError):
        refusal = ApiError(upstream.status_code, "UPSTREAM_ERROR", f"the orchestrator answered {upstream.status_code}")
    finally:
        upstream.close()
        client.close()
    if refusal.status >= 500 and refusal.status != 503:
        raise ApiError(502, "UPSTREAM_FAILED", f"orchestrator failed: {refusal.code}: {refusal.message}"[:1000],
                       {"service": "orchestrator", "status": refusal.status, "code": refusal.code})
    raise refusal
