"""When the executor installs a container's network filter (the filter itself: tests/unit/common/
test_isolation.py; on real containers: tests/security/test_network_isolation.py)."""
import json

import pytest

from spindle_executor.isolation import IsolationFailed, install, isolate
from spindle_executor.task_spec import parse_task_spec

BASE = {"cluster_id": "c1", "member_id": "c1-server-1", "image": "spindle/base:bookworm", "cpus": 0.5, "mem_mb": 128}
ISOLATED = {**BASE, "network": "spindle-default", "ip": "172.31.200.130",
            "isolation": {"peers_url": "http://127.0.0.1:9/internal/clusters/c1/peers"}}


class EndedContainer:
    """What Docker says of a container whose process has already exited."""

    name = "spindle-c1-server-1"
    attrs = {"State": {"Pid": 0, "ExitCode": 1}}

    def reload(self) -> None:
        pass


@pytest.mark.parametrize("data", [BASE, {**BASE, "network": "spindle-default", "ip": "172.31.200.130"}])
def test_a_task_without_isolation_gets_no_filter(data):
    assert isolate(parse_task_spec("t-1", json.dumps(data)), EndedContainer()) is None


def test_a_container_that_already_ended_is_left_to_report_its_end():
    """A driver that exits at once ends with its exit code, not as a launch failure."""
    assert isolate(parse_task_spec("t-1", json.dumps(ISOLATED)), EndedContainer()) is None


def test_a_filter_that_cannot_be_installed_is_a_failure():
    with pytest.raises(IsolationFailed):
        install(2**22 + 17, "*filter\nCOMMIT\n")  # no such process: no namespace to enter


def test_isolation_needs_a_peers_url():
    with pytest.raises(ValueError):
        parse_task_spec("t-1", json.dumps({**ISOLATED, "isolation": {"peers_url": ""}}))


class EndsDuringInstall(EndedContainer):
    """A container still running when first asked, gone (its namespace with it) by the install."""

    def __init__(self, pid: int):
        self.pids = [pid, 0]  # what each reload finds
        self.attrs = {"State": {"Pid": pid}}

    def reload(self) -> None:
        self.attrs = {"State": {"Pid": self.pids.pop(0) if self.pids else 0}}


def test_a_container_that_ends_while_its_filter_goes_in_reports_its_end():
    """The race of a driver that exits at once: not a launch failure (as the e2e test once saw)."""
    assert isolate(parse_task_spec("t-1", json.dumps(ISOLATED)), EndsDuringInstall(2**22 + 17)) is None


class StillRunning(EndedContainer):
    def __init__(self, pid: int):
        self.attrs = {"State": {"Pid": pid}}

    def reload(self) -> None:
        pass


def test_a_running_container_whose_filter_fails_is_a_failure():
    with pytest.raises(IsolationFailed):
        isolate(parse_task_spec("t-1", json.dumps(ISOLATED)), StillRunning(2**22 + 17))
