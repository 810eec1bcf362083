"""How often ``wait_healthy`` looks at the container (an inspection through dockerd) while the member's
check has not passed: once a second, and at once when it begins or an exec finds the container gone.
The container here is a stand-in that counts inspections; the TCP check is a real loopback listener."""
import socket
import threading
import time

import pytest
from docker.errors import APIError

from spindle_common.contracts import HealthCheckSpec
from spindle_executor.container import LOOK_EVERY_S, LaunchFailed, wait_healthy


class Counted:
    """What ``wait_healthy`` reads of a container: ``reload()``, ``status``, ``attrs``, ``logs``, ``exec_run``."""

    def __init__(self, status: str = "running", exits_after_looks: int | None = None, exec_fails: bool = False):
        self.status, self.looks = "created", 0
        self.after, self.exits_after, self.exec_fails = status, exits_after_looks, exec_fails
        self.attrs = {"State": {"ExitCode": 3}}
        self.execs = 0

    def reload(self) -> None:
        self.looks += 1
        self.status = "exited" if self.exits_after is not None and self.looks > self.exits_after else self.after

    def logs(self, tail: int) -> bytes:
        return b"the last lines"

    def exec_run(self, command):
        self.execs += 1
        if self.exec_fails:
            raise APIError("container is not running")
        return type("Result", (), {"exit_code": 1})()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_port_that_opens_after_a_while_is_found_with_a_look_a_second_not_one_per_check():
    port = free_port()
    server = socket.socket()

    def listen_later():
        time.sleep(2.5)
        server.bind(("127.0.0.1", port))
        server.listen(1)

    opener = threading.Thread(target=listen_later)
    opener.start()
    container = Counted()
    started = time.monotonic()
    try:
        wait_healthy(container, HealthCheckSpec(tcp_port=port, timeout_seconds=30), "127.0.0.1")  # type: ignore[arg-type]
    finally:
        opener.join()
        server.close()
    waited = time.monotonic() - started
    # one look at once, then one per LOOK_EVERY_S (a look per check, every 0.1 s, made ~25)
    assert 1 <= container.looks <= waited / LOOK_EVERY_S + 2, (container.looks, waited)


@pytest.mark.parametrize("health", [
    HealthCheckSpec(tcp_port=1, timeout_seconds=30),
    HealthCheckSpec(command=["true"], timeout_seconds=30),
], ids=["tcp", "command"])
def test_a_container_that_exits_is_reported_with_its_exit_code_and_logs(health):
    container = Counted(exits_after_looks=2)
    with pytest.raises(LaunchFailed, match="exited with code 3: the last lines"):
        wait_healthy(container, health, "127.0.0.1")  # type: ignore[arg-type]
    assert container.looks == 3


def test_without_a_check_a_running_container_needs_one_look():
    container = Counted()
    wait_healthy(container, None, None)  # type: ignore[arg-type]
    assert container.looks == 1


def test_an_exec_refused_makes_the_next_round_look_at_once():
    """The exec found the container stopped: the next round looks (and reports the exit) without
    waiting for the next scheduled look."""
    container = Counted(exits_after_looks=1, exec_fails=True)
    with pytest.raises(LaunchFailed, match="exited with code 3"):
        wait_healthy(container, HealthCheckSpec(command=["true"], timeout_seconds=30), None)  # type: ignore[arg-type]
    assert (container.looks, container.execs) == (2, 1)  # no exec retried against a stopped container
