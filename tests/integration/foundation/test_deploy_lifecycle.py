"""`deploy/up` is idempotent; `deploy/down` stops what `up` started and nothing else."""
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, STATE_DIR

RUN_DIR = STATE_DIR / "run"
SPINDLE_DAEMONS = ["api-server", "orchestrator", "scheduler", "disk-service", "network-service", "consul"]


def recorded_pids() -> dict[str, int]:
    return {p.stem: int(p.read_text()) for p in RUN_DIR.glob("*.pid")}


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def run(script: str) -> subprocess.CompletedProcess:
    return subprocess.run([REPO / "deploy" / script], capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)


def test_up_twice_is_harmless():
    before = recorded_pids()
    assert set(SPINDLE_DAEMONS) <= set(before)
    result = run("up")
    assert result.returncode == 0, result.stderr[-2000:]
    assert recorded_pids() == before, "a second `up` must not restart what runs"
    assert "already running" in result.stderr
    assert subprocess.run([REPO / ".venv/bin/spindle", "status"]).returncode == 0


@pytest.mark.disruptive
def test_down_stops_only_what_up_started_then_up_restores():
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    started_by_up = {f.name.removeprefix("started-") for f in RUN_DIR.glob("started-*")}
    before = recorded_pids()
    try:
        result = run("down")
        assert result.returncode == 0, result.stderr[-2000:]
        for name in SPINDLE_DAEMONS:
            assert not alive(before[name]), f"{name} still runs after down"
        assert recorded_pids() == {}
        assert alive(bystander.pid), "down must not touch processes it did not start"
        mounts = subprocess.run(["findmnt", "-rn", "-o", "TARGET"], capture_output=True, text=True).stdout.split()
        assert [m for m in mounts if m.startswith("/var/lib/spindle/mesos-agent/")] == [], \
            "no sandbox bind (a killed executor's /job) outlives down"
        docker_up = subprocess.run(["docker", "info"], capture_output=True).returncode == 0
        assert docker_up == ("dockerd" not in started_by_up), "dockerd stopped iff up had started it"
        pg_up = subprocess.run(["pg_isready", "-h", "127.0.0.1"], capture_output=True).returncode == 0
        assert pg_up == ("postgresql" not in started_by_up), "PostgreSQL stopped iff up had started it"
    finally:
        bystander.kill()
        restored = run("up")
    assert restored.returncode == 0, restored.stderr[-2000:]
    assert subprocess.run([REPO / ".venv/bin/spindle", "status"]).returncode == 0
