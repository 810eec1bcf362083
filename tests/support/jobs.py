"""What the end-to-end tests need to run the jobs in tests/integration/platform/jobs and check them:
expected word counts, K-Means reference centroids (the job's own functions, no engine), waiting
for a job, reading its RESULT line."""
import json
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
JOBS = REPO / "tests" / "integration" / "platform" / "jobs"
CPP_WORDCOUNT = REPO / "engine" / "cpp" / "examples" / "wordcount.cpp"


def expected_counts(lines: int) -> Counter:
    """The counts of the word count jobs' generated input: line i's word j is w[(7i + 13j) mod 200]."""
    words = [f"w{i:03d}" for i in range(200)]
    return Counter(words[(i * 7 + j * 13) % 200] for i in range(lines) for j in range(10))


def reference_centroids(args: list[str]) -> list[list[float]]:
    """The same K-Means in plain Python (the job's own functions, no engine)."""
    saved = sys.argv
    sys.argv = ["engine_kmeans.py", *args]
    try:
        sys.path.insert(0, str(JOBS))
        sys.modules.pop("engine_kmeans", None)
        import engine_kmeans as km
    finally:
        sys.argv = saved
        sys.path.remove(str(JOBS))
    points = [p for part in range(km.PARTS) for p in km.points_of(part)]
    centroids = km.initial()
    for _ in range(km.ITERATIONS):
        sums = {}
        for p in points:
            j, v = km.closest(centroids)(p)
            sums[j] = km.add(sums[j], v) if j in sums else v
        centroids = [[x / sums[j][1] for x in sums[j][0]] if j in sums else centroids[j]
                     for j in range(km.K)]
    return centroids


def assert_same_centroids(got, want) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=1e-9, abs=1e-9)


def result_of(job: dict) -> dict:
    """The job's ``RESULT {json}`` line."""
    return json.loads(next(line for line in job["stdout"].splitlines() if line.startswith("RESULT "))[7:])


def wait_job(user, cluster, job, timeout=600, every=0.5) -> dict:
    """The job once it ended; it must have succeeded."""
    deadline = time.monotonic() + timeout
    while (job := user.job(cluster, job["id"]))["state"] not in ("SUCCEEDED", "FAILED", "KILLED"):
        assert time.monotonic() < deadline, job
        time.sleep(every)
    assert job["state"] == "SUCCEEDED" and job["exit_code"] == 0, (job["message"], job["stderr"][-4000:])
    return job
