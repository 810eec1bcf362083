"""Starting Spindle's embedded Mesos master as its own process for tests and benchmarks."""
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.live_server import free_port, wait_ok

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def embedded_master(work_dir: Path, **settings: str) -> Iterator[str]:
    """Run ``spindle-mesos-embedded`` on a free loopback port with ``SPINDLE_…`` settings; yields host:port."""
    port = free_port()
    env = {**os.environ, "SPINDLE_MESOS_PORT": str(port), "SPINDLE_MESOS_WORK_DIR": str(work_dir / "mesos"),
           "PYTHONPATH": str(REPO), **settings}
    work_dir.mkdir(parents=True, exist_ok=True)
    with open(work_dir / "master.log", "w") as log:
        process = subprocess.Popen([REPO / ".venv/bin/spindle-mesos-embedded"], env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        wait_ok(f"http://127.0.0.1:{port}/health")
        yield f"127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError("the embedded master did not stop on SIGTERM") from None
