"""The running platform for a benchmark: a user made for the run, removed after it; a hadoop cluster
launched through the REST API, waited for, one Spindle job run on it, deleted (and waited for) at the
end."""
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from spindle_client.client import SpindleClient
from tests.conftest import read_env_file
from tests.support.live_users import live_user


def database_url() -> str:
    env = read_env_file(Path(os.environ.get("SPINDLE_STATE_DIR", "/var/lib/spindle")) / "spindle.env")
    return env["SPINDLE_DATABASE_URL"]


@contextmanager
def bench_user() -> Iterator[SpindleClient]:
    """A user made for the run, removed after it."""
    with live_user(database_url(), "bench") as client:
        yield client


@contextmanager
def running_hadoop(client: SpindleClient, options: dict[str, Any]) -> Iterator[dict]:
    """A RUNNING hadoop 3.3 cluster with ``options``; deleted and gone to DESTROYED afterwards."""
    cluster = client.launch("hadoop", "3.3", options)
    try:
        deadline = time.monotonic() + 900
        while (cluster := client.cluster(cluster))["state"] not in ("RUNNING", "FAILED"):
            if time.monotonic() > deadline:
                raise SystemExit(f"cluster {cluster['id']} stuck in {cluster['state']}")
            time.sleep(1)
        if cluster["state"] != "RUNNING":
            raise SystemExit(f"hadoop did not start: {cluster['reason_code']}: {cluster['reason']}")
        yield cluster
    finally:
        client.delete(cluster)
        deadline = time.monotonic() + 300
        while client.cluster(cluster)["state"] != "DESTROYED" and time.monotonic() < deadline:
            time.sleep(1)


def run_job(client: SpindleClient, cluster: dict, script: Path, args: list[str]) -> str:
    """Run ``script`` as a Spindle job of ``cluster``; its stdout once it SUCCEEDED."""
    job = client.submit(cluster, script, args=args)
    while (job := client.job(cluster, job["id"]))["state"] in ("PENDING", "RUNNING"):
        time.sleep(2)
    if job["state"] != "SUCCEEDED":
        raise SystemExit(f"the Spindle job {job['state']}: {job['message']}\n{job['stderr'][-3000:]}")
    return job["stdout"]
