"""Engine test fixtures: one engine per session, a 2-executor Python worker; engine agents
(cluster mode's hosts) as processes on 127.0.0.1."""

import glob
import os
import signal
import subprocess
import sys

import pytest

from spindle_engine import Cluster, Engine, Properties, Worker

TESTS = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(TESTS), "python")


class Agent:
    """An engine agent process on 127.0.0.1 with two work dirs (its 'disks')."""

    def __init__(self, root, name, port=0, env=None):
        self.disks = [os.path.join(root, name, d) for d in ("disk1", "disk2")]
        for d in self.disks:
            os.makedirs(d, exist_ok=True)
        env = dict(os.environ, PYTHONPATH=PACKAGE, **(env or {}))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "spindle_engine.agent", "--bind", "127.0.0.1",
             "--port", str(port), "--work", ",".join(self.disks), "--cores", "1"],
            stdout=subprocess.PIPE, env=env)
        line = self.proc.stdout.readline().decode()
        assert line.startswith("READY"), line
        self.port = int(line.split()[1])
        self.address = f"127.0.0.1:{self.port}"

    def files(self, pattern):
        return [p for d in self.disks for p in glob.glob(os.path.join(d, "spindle-engine", "*",
                                                                          pattern))]

    def executor_pids(self):
        """Its executors' process ids (its children)."""
        return subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True,
                              text=True).stdout.split()

    def kill(self):
        """The host dies: the agent and (stdin EOF) its executors."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


@pytest.fixture(scope="session")
def fn():
    """Reference to a test function: fn('ops.py:AddOne') -> '<tests>/functions/ops.py:AddOne'."""
    return lambda ref: os.path.join(TESTS, "functions", ref)


@pytest.fixture(scope="session")
def engine():
    with Engine.start() as e:
        yield e


@pytest.fixture(scope="session")
def cluster(engine):
    return Cluster(Properties({"executor.instances": 2, "executor.cores": 1,
                               "executor.memory": "256MB", "test.tag": "spindle"}))


@pytest.fixture(scope="session")
def python_worker(cluster):
    return Worker(cluster, "python")
