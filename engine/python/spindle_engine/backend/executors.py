"""Executor processes of a worker and the connections (slots) the scheduler runs tasks on."""

import os
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from thrift.transport.TTransport import TTransportException

from ..errors import EngineError
from ..hdfs import local_node
from ..rpc import close_quietly, connect

_HERE = Path(__file__).resolve()
CPP_EXECUTOR = os.environ.get("SPINDLE_CPP_EXECUTOR",
                              str(_HERE.parents[3] / "cpp" / "build" / "spindle-cpp-executor"))
PACKAGE_PARENT = str(_HERE.parents[2])
READY_TIMEOUT_S = 30
# Native libraries' thread pools (numpy's BLAS, OpenMP in C++ functions) would each start one
# thread per machine core in every executor process; unless the user set them, they get the
# process's own cores (PySpark does the same for its Python workers).
THREAD_POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class ExecutorLost(Exception):
    """The connection to an executor broke: its process died or stopped answering."""


def _free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _drain(stream, log_path):
    """Copy what an executor still prints on stdout to its log, so it never blocks on a pipe."""
    with open(log_path, "ab") as log:
        for line in iter(stream.readline, b""):
            log.write(line)
            log.flush()


class ExecutorProcess:
    """One executor process; `generation` grows each time it is (re)started."""

    down = False  # a local process is restarted, never given up (see remote.py)

    def __init__(self, language, eid, cores, memory, scratch_dirs, log_dir, bind="127.0.0.1",
                 extra_args=()):
        self.language = language
        self.host = bind
        self.extra_args = list(extra_args)
        self.id = eid
        self.cores = cores
        self.memory = memory
        self.scratch_dirs = scratch_dirs
        self.log_path = os.path.join(log_dir, f"executor-{language}-{eid}.log")
        self.generation = 0
        self.proc = None
        self.port = None
        self._lock = threading.Lock()

    @property
    def name(self):
        return f"{self.language} executor {self.id}"

    @property
    def node(self):
        """The node it runs on (the driver's: SPINDLE_NODE, else the hostname), for locality."""
        return local_node()

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def qualify(self, path):
        """How other executors name this executor's output `path` (local mode: as is)."""
        return path

    def _command(self, port):
        args = ["--port", str(port), "--id", str(self.id), "--cores", str(self.cores),
                "--memory", str(self.memory), "--scratch", ",".join(self.scratch_dirs),
                "--bind", self.host, *self.extra_args]
        if self.language == "python":
            return [sys.executable, "-m", "spindle_engine.executor", *args]
        if not os.access(CPP_EXECUTOR, os.X_OK):
            raise EngineError(f"C++ executor not built ({CPP_EXECUTOR}); run engine/build.sh")
        return [CPP_EXECUTOR, *args]

    def start(self):
        """Start the process; wait_ready() completes the start."""
        self.port = _free_port(self.host)
        env = dict(os.environ)
        env["PYTHONPATH"] = PACKAGE_PARENT + os.pathsep + env.get("PYTHONPATH", "")
        for pool in THREAD_POOL_VARIABLES:  # as many native threads as the process has cores
            env.setdefault(pool, str(self.cores))
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self._command(self.port), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=log, env=env)

    def wait_ready(self):
        """Wait for the `READY <port>` line (EXECUTOR_CLI.md)."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        out = self.proc.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([out], [], [], 0.2)
            if ready:
                line = out.readline()
                if line.startswith(b"READY"):
                    self.generation += 1
                    threading.Thread(target=_drain, args=(out, self.log_path), daemon=True).start()
                    return
                if not line:
                    break
            elif self.proc.poll() is not None:
                break
        self.kill()
        raise EngineError(f"{self.name} did not start; see {self.log_path}")

    def restart_if(self, generation):
        """Restart unless someone already did since `generation` was seen."""
        with self._lock:
            if self.generation == generation:
                self.kill()
                self.start()
                self.wait_ready()

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """Close stdin (the executor exits on EOF); kill if it lingers."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.kill()


class Slot:
    """One connection to an executor, running one task at a time."""

    def __init__(self, executor):
        self.executor = executor
        self._transport = None
        self._client = None
        self._generation = -1

    def connect(self, properties):
        ex = self.executor
        if self._client is not None and self._generation == ex.generation:
            return
        self.close()
        generation = ex.generation
        try:
            timeout_s = float(properties.get("task.timeout_s") or 0)
            self._transport, self._client = connect(ex.host, ex.port,
                                                    int(timeout_s * 1000) or None)
            self._client.hello(properties)
        except (TTransportException, OSError, EOFError) as e:
            self.close()
            raise ExecutorLost(str(e)) from e
        self._generation = generation

    def run(self, task):
        try:
            return self._client.run(task)
        except (TTransportException, OSError, EOFError) as e:
            self.close()
            raise ExecutorLost(str(e)) from e

    def uncache(self, keys):
        try:
            self._client.uncache(keys)
        except (TTransportException, OSError, EOFError):
            self.close()

    def close(self):
        close_quietly(self._transport)
        self._transport = self._client = None
