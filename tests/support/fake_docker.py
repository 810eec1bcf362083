"""Fakes of Docker for the agent's unit tests (Docker is the one thing they fake): a container and a
client (``FakeContainer``, ``FakeDocker``, with the low-level API each test needs), and for the member
terminal an exec whose tty is a real socket pair, the far end playing the shell, and whose process is
a real process of this host (sleep), so that killing it is real (``RunningExec.kill`` finds it in
/proc and checks its cgroup)."""
import socket
import subprocess
from pathlib import Path

from docker.errors import NotFound


class Shell:
    """The exec's host process (a real one: its kill is real) and the far end of its tty."""

    def __init__(self):
        self.process = subprocess.Popen(["sleep", "120"], start_new_session=True)
        self.tty, self.ours = socket.socketpair()
        self.tty.settimeout(10)
        self.code: int | None = None  # the exit code Docker reports once the shell ended
        # The container's cgroup is named by its id: one this process's cgroup path holds.
        self.cgroup = max((line.split(":", 2)[2] for line in
                           Path(f"/proc/{self.process.pid}/cgroup").read_text().splitlines()), key=len)

    def read(self, size: int) -> bytes:
        found = b""
        while len(found) < size:
            chunk = self.tty.recv(size - len(found))
            if not chunk:
                break
            found += chunk
        return found

    def end(self, code: int = 0) -> None:
        """The shell exits: its tty closes, its process is gone."""
        self.tty.close()
        self.process.kill()
        self.process.wait()
        self.code = code

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for end in (self.tty, self.ours):
            end.close()


class FakeTerminalApi:
    """docker-py's low-level API as the terminal uses it."""

    def __init__(self, shell: Shell, create_error=None):
        self.shell, self.create_error = shell, create_error
        self.created: list = []
        self.resized: list = []

    def exec_create(self, container_id, cmd, **options):
        if self.create_error:
            raise self.create_error
        self.created.append((container_id, cmd, options))
        return {"Id": "e1"}

    def exec_start(self, exec_id, **options):
        assert (exec_id, options) == ("e1", {"socket": True, "tty": True})
        return socket.SocketIO(self.shell.ours, "rwb")  # what docker-py gives for its Unix socket

    def exec_resize(self, exec_id, height, width):
        self.resized.append((exec_id, width, height))

    def exec_inspect(self, exec_id):
        running = self.shell.process.poll() is None
        code = None if running else (self.shell.code if self.shell.code is not None else 137)
        return {"Running": running, "Pid": self.shell.process.pid, "ExitCode": code}


class FakeContainer:
    def __init__(self, labels: dict, container_id: str = "abc123"):
        self.id, self.labels = container_id, labels


class FakeDocker:
    """docker.DockerClient: ``containers.get`` finds ``container`` (None: NotFound), ``api`` is the
    low-level API."""

    def __init__(self, container, api):
        self.container, self.api, self.closed = container, api, False
        self.containers = self

    def get(self, name):
        if self.container is None:
            raise NotFound("no such container")
        return self.container

    def close(self):
        self.closed = True


def docker_for(shell: Shell, labels=None, create_error=None) -> FakeDocker:
    container = FakeContainer({"io.spindle.owned": "true"} if labels is None else labels, container_id=shell.cgroup)
    return FakeDocker(container, FakeTerminalApi(shell, create_error))


def dockerd_answer(status: int):
    """What docker-py's APIError keeps of dockerd's answer."""
    return type("Answer", (), {"status_code": status, "url": "http+docker://localhost/exec", "reason": "x"})()
