"""Capped job logs and outputs, bounded uploads (issue 15, "Capped logs/outputs, upload limits"), on
the running platform through the public API, with one static-web cluster:

- a job whose driver prints 1 GB to stdout and writes a 150 MB output does not grow the
  orchestrator's memory: its resident peak (the kernel's high-water mark, reset when the job is
  submitted) stays less than 100 MB above its size then, while the job runs and its result comes
  back. What is kept of its stdout is its end (the driver's last line) after a marker saying it
  was cut, at most the log cap; its output comes back whole (the SHA-256 the driver printed),
  downloaded through the api-server as a stream that does not grow the api-server's memory by its
  size either;
- a job whose output is larger than ``SPINDLE_JOB_OUTPUT_MAX_MB`` (a sparse file: as large as it
  says, costing no disk) still succeeds, without its output, and its message says why;
- a submission over the edge's limit, declared by ``Content-Length`` or sent chunked without one, is
  413 ``REQUEST_TOO_LARGE`` naming the limit and creates nothing; the orchestrator refuses an
  oversized one too.

The cluster is deleted at the end and must reach DESTROYED with nothing left."""
import hashlib
import re
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from spindle_api.body_limit import JOB_MAX_BYTES
from spindle_client.client import SpindleError
from spindle_orchestrator.jobs import MAX_SUBMIT_BYTES, cut_marker
from tests.conftest import STATE_DIR
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.internal import internal_headers
from tests.support.live_users import API_URL, live_user
from tests.support.through_restarts import PASSING, retrying, settled

JOBS = Path(__file__).parent / "jobs"
FLOOD_BYTES = 1_000_000_000  # what the driver prints to stdout
OUTPUT_MB = 150  # what it writes to /job/output (random: gzip cannot shrink it)
MAX_GROWTH = 100 * 2**20  # of a service's RSS while it handles all that
LOG_CAP = 1_000_000  # SPINDLE_JOB_LOG_MAX_BYTES as deploy/up leaves it
FINISHED = ("SUCCEEDED", "FAILED", "KILLED")


class RssPeak:
    """A service's resident memory (of the pid ``deploy/up`` recorded): its peak (``VmHWM``) from
    ``start()`` to ``stop()``, over its size at ``start()``. ``start()`` resets the kernel's high-water
    mark (``/proc/PID/clear_refs`` ``5``), so the peak is exact: no sampling thread that a busy machine
    could starve (one that polled ``VmRSS`` every 50 ms once took only 10 samples in 12 s)."""

    def __init__(self, service: str):
        self.service = service
        self.pid = self._pid()
        self.baseline = 0

    def _pid(self) -> int:
        return int((STATE_DIR / "run" / f"{self.service}.pid").read_text().strip())

    def _kb(self, field: str) -> int:
        status = Path(f"/proc/{self.pid}/status").read_text()
        return int(re.search(rf"^{field}:\s+(\d+) kB", status, re.M).group(1)) * 1024  # type: ignore[union-attr]

    def start(self) -> None:
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS now
        self.baseline = self._kb("VmRSS")

    def stop(self) -> int:
        """The peak's growth over the baseline, in bytes."""
        try:
            peak = self._kb("VmHWM")
        except (FileNotFoundError, ProcessLookupError):
            peak = None
        assert peak is not None and self._pid() == self.pid, \
            f"{self.service} was restarted while it was measured (another engineer's restart?): run again"
        return peak - self.baseline


@pytest.fixture(scope="module")
def user(database_url):
    with live_user(database_url, "flood") as client:
        yield client


@pytest.fixture(scope="module")
def cluster(user, platform_env) -> Iterator[dict]:
    """A RUNNING static-web cluster (launched again, up to 3 times, when a service that another
    engineer restarts fails the launch)."""
    launched: list[dict] = []
    try:
        for _ in range(3):
            launched.append(retrying(lambda: user.launch("static-web", "1.0", {
                "roles": {"server": {"count": 1, "cpus": 0.1, "disks": {"hdd": 1}}}, "wait_for_resources": True})))
            running = settled(user, launched[-1], ("RUNNING", "FAILED"), timeout=600)
            if running["state"] == "RUNNING" or "UNAVAILABLE" not in (running["reason"] or ""):
                break
        assert running["state"] == "RUNNING", (running["reason_code"], running["reason"])
        yield running
    finally:
        for each in launched:
            retrying(lambda c=each: user.delete(c))
            final = settled(user, each, ("DESTROYED",), timeout=300)
            assert final["state"] == "DESTROYED"
            assert_nothing_left(platform_env, final)


def ended(user, cluster: dict, job: dict, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        try:
            job = user.job(cluster, job["id"])
        except SpindleError as exc:
            if exc.status not in PASSING:
                raise
        if job["state"] in FINISHED:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.5)


def test_a_log_flood_and_a_big_output_cost_the_services_no_memory(user, cluster, tmp_path):
    orchestrator = RssPeak("orchestrator")
    orchestrator.start()
    job = ended(user, cluster, retrying(lambda: user.submit(cluster, JOBS / "flood.py",
                                                             args=[str(FLOOD_BYTES), str(OUTPUT_MB)])))
    growth = orchestrator.stop()
    print(f"orchestrator: RSS {orchestrator.baseline >> 20} MB, its peak {growth >> 20} MB above it while the "
          "job ran")
    assert (job["state"], job["exit_code"]) == ("SUCCEEDED", 0), (job["message"], job["stderr"][-2000:])
    assert growth < MAX_GROWTH, f"the orchestrator grew by {growth >> 20} MB handling the job"

    stdout = job["stdout"]
    marker = cut_marker("stdout", LOG_CAP)
    assert stdout.startswith(marker), stdout[:200]
    assert len(stdout.encode()) <= len(marker) + LOG_CAP
    last = stdout.rstrip("\n").rsplit("\n", 1)[-1]
    assert last.startswith(f"FLOOD DONE {FLOOD_BYTES} bytes, output sha256 "), last
    assert job["stderr"] == "stderr stays small\n"

    api_server = RssPeak("api-server")
    api_server.start()
    archive = tmp_path / "output.tar.gz"
    size = retrying(lambda: user.download_output(cluster, job["id"], archive))
    growth = api_server.stop()
    print(f"api-server: RSS {api_server.baseline >> 20} MB, its peak {growth >> 20} MB above it passing "
          f"{size >> 20} MB through")
    assert size >= OUTPUT_MB << 20  # random bytes: gzip cannot make them smaller
    assert growth < MAX_GROWTH, f"the api-server grew by {growth >> 20} MB passing {size >> 20} MB through"
    digest = hashlib.sha256()
    with tarfile.open(archive, mode="r:gz") as tar:
        big = tar.extractfile("output/big.bin")
        assert big is not None
        while chunk := big.read(1 << 20):
            digest.update(chunk)
    assert last.endswith(f"output sha256 {digest.hexdigest()}")


def test_an_output_over_the_limit_is_left_out_and_the_job_says_so(user, cluster, tmp_path):
    flood = 20_000_000  # its log is cut too
    job = ended(user, cluster, retrying(lambda: user.submit(cluster, JOBS / "flood.py", args=[str(flood), "1", "64"])))
    assert (job["state"], job["exit_code"]) == ("SUCCEEDED", 0), (job["message"], job["stderr"][-2000:])
    assert job["stdout"].startswith(cut_marker("stdout", LOG_CAP)) and f"FLOOD DONE {flood} bytes" in job["stdout"]
    assert re.search(r"^the driver exited with 0; the output was not kept: its \d+ bytes are over the limit of "
                     r"\d+ bytes \(SPINDLE_JOB_OUTPUT_MAX_MB\)$", job["message"]), job["message"]
    archive = tmp_path / "output.tar.gz"
    retrying(lambda: user.download_output(cluster, job["id"], archive))
    with tarfile.open(archive, mode="r:gz") as tar:
        assert tar.getnames() == ["output"]


def submissions(user, cluster: dict) -> tuple[list[str], set[str]]:
    """The cluster's jobs, and the folders of the orchestrator's jobs dir."""
    return [j["id"] for j in retrying(lambda: user.jobs(cluster))], {p.name for p in (STATE_DIR / "jobs").iterdir()}


def chunks(total: int) -> Iterator[bytes]:
    yield b'{"main": "main.py", "files": {"main.py": "'
    for _ in range(total >> 20):
        yield b"A" * (1 << 20)
    yield b'"}}'


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_an_upload_over_the_limit_is_413_at_the_edge_and_creates_nothing(user, cluster, declared):
    before = submissions(user, cluster)
    total = JOB_MAX_BYTES + (4 << 20)
    headers = {"Authorization": f"Bearer {user.token}", "Content-Type": "application/json"}
    if declared:
        headers["Content-Length"] = str(len(b"".join(chunks(total))))
    path = f"/clusters/{cluster['owner']}/{cluster['product']}/{cluster['version']}/{cluster['id']}/jobs"
    with httpx.Client(base_url=API_URL, timeout=120) as http:
        answer = http.post(path, content=chunks(total), headers=headers)
    assert answer.status_code == 413, answer.text[:500]
    error = answer.json()["error"]
    assert error["code"] == "REQUEST_TOO_LARGE" and str(JOB_MAX_BYTES) in error["message"], error
    assert submissions(user, cluster) == before


def test_the_orchestrator_refuses_an_oversized_submission_too(user, cluster, platform_env):
    before = submissions(user, cluster)
    headers = internal_headers(platform_env.get("SPINDLE_INTERNAL_TOKEN", ""), "test", "service")
    url = platform_env.get("SPINDLE_ORCHESTRATOR_URL", "http://127.0.0.1:8081")
    with httpx.Client(base_url=url, timeout=120, headers=headers) as http:
        answer = http.post(f"/clusters/{cluster['id']}/jobs", content=chunks(MAX_SUBMIT_BYTES + (1 << 20)),
                           headers={"Content-Type": "application/json"})
    assert answer.status_code == 413, answer.text[:500]
    assert answer.json()["error"] == {"code": "REQUEST_TOO_LARGE", "details": {"limit": MAX_SUBMIT_BYTES},
                                      "message": f"a job's submission is at most {MAX_SUBMIT_BYTES} bytes"}
    assert submissions(user, cluster) == before
