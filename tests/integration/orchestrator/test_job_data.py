"""A job's data paths on a real orchestrator (its own PostgreSQL database, jobs in a temporary
folder, served by uvicorn; no worker, so the job stays unfinished): the executor is told the caps
with the job's files; a result over them is 413 ``RESULT_TOO_LARGE`` whether its size is declared
or only counted as it arrives, and leaves nothing behind; a result within them is kept with its
logs' ends marked as cut and its output as one archive, which downloads as it was made; a
submission over the orchestrator's own limit is 413 and creates nothing."""
import io
import json
import tarfile
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import text

from spindle_common import migrations
from spindle_common.db import session_factory
from spindle_orchestrator import jobs
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from tests.support.internal import internal_headers
from tests.support.live_server import serve

LOG_CAP = 100


@pytest.fixture
def orchestrator(fresh_database, platform_env, tmp_path) -> Iterator[tuple[httpx.Client, Settings]]:
    migrations.upgrade("spindle_orchestrator", fresh_database)
    settings = Settings(database_url=fresh_database, internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                        consul_url=platform_env["SPINDLE_CONSUL_URL"], state_dir=tmp_path,
                        scheduler_database_url=platform_env["SPINDLE_DATABASE_URL"], job_log_max_bytes=LOG_CAP,
                        job_output_max_mb=1)
    headers = internal_headers(settings.internal_token, "api-server", "service")
    with serve(build_app(settings)) as url, httpx.Client(base_url=url, timeout=60, headers=headers) as http:
        yield http, settings


def running_cluster(http: httpx.Client, settings: Settings) -> str:
    """A cluster the orchestrator takes jobs for (its worker is not running: set RUNNING by hand)."""
    answer = http.post("/clusters", json={"owner": "alice", "owner_id": "u1", "product": "static-web",
                                          "version": "1.0", "options": {}})
    assert answer.status_code == 202, answer.text
    cluster_id = answer.json()["id"]
    with session_factory(settings.database_url)() as session, session.begin():
        session.execute(text("UPDATE orchestrator.clusters SET state = 'RUNNING' WHERE id = :id"), {"id": cluster_id})
    return cluster_id


def result(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def chunks(total: int, size: int = 1 << 16) -> Iterator[bytes]:
    for start in range(0, total, size):
        yield b"\0" * min(size, total - start)


def test_a_jobs_result_is_capped_streamed_to_disk_and_its_output_downloads_from_one_file(orchestrator):
    http, settings = orchestrator
    cluster_id = running_cluster(http, settings)
    main = "cHJpbnQoMSk="  # print(1)
    submitted = http.post(f"/clusters/{cluster_id}/jobs", json={"owner": "alice", "main": "m.py", "args": [],
                                                                "files": {"m.py": main}})
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["id"]
    folder = settings.jobs_dir / job_id

    files = http.get(f"/internal/jobs/{job_id}/files")
    assert files.status_code == 200
    assert (files.headers["x-spindle-log-max-bytes"], files.headers["x-spindle-output-max-bytes"]) == \
        (str(LOG_CAP), str(1 << 20))
    with tarfile.open(fileobj=io.BytesIO(files.content)) as tar:
        assert tar.getnames() == ["m.py"]
    with tarfile.open(fileobj=io.BytesIO(http.get(f"/clusters/{cluster_id}/jobs/{job_id}/output").content)) as tar:
        assert tar.getnames() == ["output"]  # nothing back yet

    limit = jobs.result_limit(LOG_CAP, 1 << 20)
    declared = http.put(f"/internal/jobs/{job_id}/result", content=chunks(limit + 1),
                        headers={"Content-Length": str(limit + 1)})
    counted = http.put(f"/internal/jobs/{job_id}/result", content=chunks(limit + 1))  # chunked: no length
    for refused in (declared, counted):
        assert refused.status_code == 413, refused.text
        error = refused.json()["error"]
        assert error["code"] == "RESULT_TOO_LARGE" and "SPINDLE_JOB_OUTPUT_MAX_MB" in error["message"], error
        assert error["details"] == {"limit": limit, "output_limit": 1 << 20}
    assert sorted(p.name for p in folder.iterdir()) == ["m.py", jobs.OUTPUT_ARCHIVE]  # no partial file left

    kept = http.put(f"/internal/jobs/{job_id}/result", content=result({
        "result.json": json.dumps({"exit_code": 0, "note": ""}).encode(), "stdout": b"x" * 500 + b"END",
        "stderr": b"fine", "output/part-0": b"\1" * 1000}))
    assert kept.status_code == 204, kept.text
    job = http.get(f"/clusters/{cluster_id}/jobs/{job_id}").json()
    assert job["stdout"] == jobs.cut_marker("stdout", LOG_CAP) + "x" * (LOG_CAP - 3) + "END"
    assert (job["stderr"], job["exit_code"]) == ("fine", 0)
    download = http.get(f"/clusters/{cluster_id}/jobs/{job_id}/output")
    assert download.status_code == 200 and download.headers["content-type"] == "application/gzip"
    assert download.content == (folder / jobs.OUTPUT_ARCHIVE).read_bytes()
    assert int(download.headers["content-length"]) == len(download.content)
    with tarfile.open(fileobj=io.BytesIO(download.content), mode="r:gz") as tar:
        assert tar.extractfile("output/part-0").read() == b"\1" * 1000  # type: ignore[union-attr]
    assert sorted(p.name for p in folder.iterdir()) == ["m.py", jobs.OUTPUT_ARCHIVE]


def test_a_submission_over_the_orchestrators_limit_is_413_and_creates_nothing(orchestrator):
    http, settings = orchestrator
    cluster_id = running_cluster(http, settings)
    body = chunks(jobs.MAX_SUBMIT_BYTES + 1, 1 << 20)
    refused = http.post(f"/clusters/{cluster_id}/jobs", content=body, headers={"Content-Type": "application/json"})
    assert refused.status_code == 413 and refused.json()["error"]["code"] == "REQUEST_TOO_LARGE", refused.text
    bad = http.post(f"/clusters/{cluster_id}/jobs", json={"owner": "alice", "main": "m.py", "files": "no"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "VALIDATION_FAILED", bad.text
    assert http.get(f"/clusters/{cluster_id}/jobs").json() == []
    assert not settings.jobs_dir.exists() or list(settings.jobs_dir.iterdir()) == []
