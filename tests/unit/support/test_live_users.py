"""Which users of the test ledger a sweep removes: those whose process is gone."""
import os
import subprocess

import pytest

from tests.support.live_users import process_key, stale_users


def a_dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(("key", "stale"), [
    (lambda: process_key(os.getpid()), False),  # this process: alive
    (lambda: f"{a_dead_pid()} 1", True),  # its process has exited
    (lambda: f"{os.getpid()} 1", True),  # the pid is another process's now (another start time)
    (lambda: "", True),  # written by a process killed mid-write
    (lambda: "not a pid", True),
])
def test_stale_users(tmp_path, key, stale):
    (tmp_path / "t-1").write_text(key())
    assert stale_users(tmp_path) == (["t-1"] if stale else [])


def test_a_missing_ledger_has_no_stale_users(tmp_path):
    assert stale_users(tmp_path / "absent") == []


def test_process_key_of_a_dead_pid_is_none():
    assert process_key(a_dead_pid()) is None
