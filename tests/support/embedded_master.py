"""Starting Spindle's embedded Mesos master and agents as their own processes for tests and benchmarks.

``embedded_master`` is the single-node form (the master runs its local agent when given agent
settings); ``master_process`` and ``embedded_agent`` start a master and separate agents, each a
``MesosProcess`` a test may SIGKILL and start again on the same port and work dir."""
import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from spindle_mesos_embedded.main import LOCAL_AGENT_SETTINGS
from tests.support.live_server import free_port, wait_ok

REPO = Path(__file__).resolve().parents[2]


class MesosProcess:
    """One ``spindle-mesos-embedded`` or ``spindle-mesos-agent`` process with fixed settings."""

    def __init__(self, program: str, address: str, env: dict[str, str], log_path: Path):
        self.program, self.address, self.env, self.log_path = program, address, env, log_path
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> None:
        """Start (again: same port, same work dir) and wait until it answers /health."""
        assert self.process is None or self.process.poll() is not None, f"{self.program} already runs"
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen([REPO / ".venv/bin" / self.program], env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        wait_ok(f"http://{self.address}/health")

    def kill(self) -> None:
        """SIGKILL: nothing of the process gets to clean up (its executors, in their own sessions, live on)."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> None:
        """Stop it with ``sig`` if it runs; it must exit within ``timeout`` seconds."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"{self.program} did not stop on signal {sig}") from None


def inherited() -> dict[str, str]:
    """This process's environment without the platform agent's settings (make test sets
    SPINDLE_AGENT_CPUS for it): a test's master or agent gets these only from the test, or a master
    would run a local agent the test never asked for."""
    return {k: v for k, v in os.environ.items() if k not in LOCAL_AGENT_SETTINGS}


@contextmanager
def master_process(work_dir: Path, **settings: str) -> Iterator[MesosProcess]:
    """``spindle-mesos-embedded`` on a free loopback port with ``SPINDLE_…`` settings (work dir
    ``work_dir/mesos``, log ``work_dir/master.log``); stopped with SIGTERM afterwards."""
    port = free_port()
    env = {**inherited(), "SPINDLE_MESOS_PORT": str(port), "SPINDLE_MESOS_WORK_DIR": str(work_dir / "mesos"),
           "PYTHONPATH": str(REPO), **settings}
    work_dir.mkdir(parents=True, exist_ok=True)
    master = MesosProcess("spindle-mesos-embedded", f"127.0.0.1:{port}", env, work_dir / "master.log")
    master.start()
    try:
        yield master
    finally:
        master.stop()


@contextmanager
def embedded_master(work_dir: Path, **settings: str) -> Iterator[str]:
    """Run ``spindle-mesos-embedded`` on a free loopback port with ``SPINDLE_…`` settings; yields host:port.
    With agent settings (``SPINDLE_MESOS_RESOURCES``, ``SPINDLE_AGENT_CPUS``…) it runs its own local agent."""
    with master_process(work_dir, **settings) as master:
        yield master.address


@contextmanager
def embedded_agent(master: str, work_dir: Path, node: str, **settings: str) -> Iterator[MesosProcess]:
    """A ``spindle-mesos-agent`` of ``master`` (host:port) on a free loopback port, offering as
    ``node``, with its own work dir (``work_dir/agent``; log ``work_dir/agent.log``) and ``SPINDLE_…``
    settings (e.g. ``SPINDLE_MESOS_RESOURCES``). Afterwards it is shut down with SIGUSR1, which
    stops its executors too."""
    port = free_port()
    env = {**inherited(), "SPINDLE_MESOS_MASTER": master, "SPINDLE_AGENT_HOST": "127.0.0.1",
           "SPINDLE_AGENT_PORT": str(port), "SPINDLE_MESOS_WORK_DIR": str(work_dir / "agent"),
           "SPINDLE_NODE_NAME": node, "PYTHONPATH": str(REPO), **settings}
    work_dir.mkdir(parents=True, exist_ok=True)
    agent = MesosProcess("spindle-mesos-agent", f"127.0.0.1:{port}", env, work_dir / "agent.log")
    agent.start()
    try:
        yield agent
    finally:
        agent.stop(signal.SIGUSR1)
