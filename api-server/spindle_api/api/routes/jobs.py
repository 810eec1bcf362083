"""Jobs on a cluster: submit a driver program (its files uploaded as base64), list them, read one
with its logs, download what it wrote to /job/output. Same visibility as the cluster itself."""
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from spindle_api.api.deps import CurrentUser, OrchestratorDep
from spindle_api.api.routes.clusters import visible_cluster

router = APIRouter(prefix="/clusters/{username}/{product}/{version}/{cluster_id}/jobs", tags=["jobs"])


class JobSubmit(BaseModel):
    main: str = Field(min_length=1, max_length=128, description="which uploaded file the driver runs",
                      examples=["wordcount.py"])
    args: list[str] = Field(default=[], max_length=256, description="arguments after the main file")
    files: dict[str, str] = Field(min_length=1, max_length=64,
                                  description="file name → base64 content: the main file and any .py/.so it needs")


@router.post("", status_code=202)
def submit_job(username: str, product: str, version: str, cluster_id: str, body: JobSubmit, user: CurrentUser,
               orchestrator: OrchestratorDep, response: Response) -> dict[str, Any]:
    """Run a driver program against the (RUNNING) cluster; follow it at ``Location``."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    job = orchestrator.request("POST", f"/clusters/{cluster_id}/jobs", json={"owner": user.username, **body.model_dump()})
    response.headers["Location"] = f"/clusters/{username}/{product}/{version}/{cluster_id}/jobs/{job['id']}"
    return job


@router.get("")
def list_jobs(username: str, product: str, version: str, cluster_id: str, user: CurrentUser,
              orchestrator: OrchestratorDep) -> list[dict[str, Any]]:
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return orchestrator.request("GET", f"/clusters/{cluster_id}/jobs")


@router.get("/{job_id}")
def get_job(username: str, product: str, version: str, cluster_id: str, job_id: str, user: CurrentUser,
            orchestrator: OrchestratorDep) -> dict[str, Any]:
    """The job: state, exit code, and the driver's stdout and stderr (kept after it ends)."""
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    return orchestrator.request("GET", f"/clusters/{cluster_id}/jobs/{job_id}")


@router.get("/{job_id}/output", response_class=Response,
            responses={200: {"content": {"application/gzip": {}}, "description": "/job/output as .tar.gz"}})
def job_output(username: str, product: str, version: str, cluster_id: str, job_id: str, user: CurrentUser,
               orchestrator: OrchestratorDep) -> Response:
    visible_cluster(orchestrator, user, username, product, version, cluster_id)
    answer = orchestrator.request_raw("GET", f"/clusters/{cluster_id}/jobs/{job_id}/output")
    return Response(answer.content, media_type="application/gzip",
                    headers={"Content-Disposition": answer.headers.get("content-disposition", "attachment")})
