"""The Cassandra image's drain (``spindle-decommission start|done``, run by Spindle in a node a
resize removes) against a ``nodetool`` that plays a node's part: its mode in ``netstats`` and a
``decommission`` that refuses at once (too few nodes would be left for a keyspace's replication
factor), fails while leaving, or leaves the ring. The real one runs in
``tests/integration/platform/test_cassandra_resize.py``."""
import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "catalog" / "cassandra" / "5.0" / "image" / "spindle-decommission"
REFUSAL = ("Not enough live nodes to maintain replication factor in keyspace spindle (RF = 3, N = 3). "
           "Perform a forceful decommission to ignore.")

# What the fake node's `nodetool decommission` does: (mode it goes into, seconds, then its end).
# As Cassandra 5.0.9's nodetool said it on the platform, and as older ones say it.
REFUSES = (f'echo "nodetool: Unsupported operation: {REFUSAL}"; '
           'echo "See \'nodetool help\' or \'nodetool help <command>\'."; exit 1')
REFUSES_OLD = (f'echo "error: {REFUSAL}"; echo "-- StackTrace --"; '
               'echo "java.lang.UnsupportedOperationException"; exit 2')
LEAVES = 'echo LEAVING > "$STATE/mode"; sleep 3; echo DECOMMISSIONED > "$STATE/mode"'
FAILS = 'echo LEAVING > "$STATE/mode"; sleep 1; echo NORMAL > "$STATE/mode"; echo "error: Stream failed"; exit 1'


def fake_nodetool(folder: Path, decommission: str) -> dict[str, str]:
    """A ``nodetool`` on PATH whose node starts NORMAL; the environment that runs the script with it."""
    (folder / "bin").mkdir()
    (folder / "mode").write_text("NORMAL\n")
    tool = folder / "bin" / "nodetool"
    tool.write_text(f'#!/bin/sh\ncase "$1" in\n  netstats) echo "Mode: $(cat "$STATE/mode")" ;;\n'
                    f'  decommission) {decommission} ;;\nesac\n')
    tool.chmod(0o755)
    return {**os.environ, "PATH": f"{folder / 'bin'}:{os.environ['PATH']}", "STATE": str(folder),
            "SPINDLE_DECOMMISSION_DIR": str(folder)}


def drain(env: dict[str, str], step: str) -> tuple[int, str]:
    done = subprocess.run([str(SCRIPT), step], env=env, capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, done.stdout.strip()


def wait_done(env: dict[str, str]) -> tuple[int, str]:
    for _ in range(30):
        code, said = drain(env, "done")
        if code != 1:
            return code, said
        assert said.startswith("still leaving"), said
        subprocess.run(["sleep", "0.5"], check=True)
    raise AssertionError("the decommission never ended")


@pytest.mark.parametrize(("refuses", "reason"), [(REFUSES, f"Unsupported operation: {REFUSAL}"),
                                                 (REFUSES_OLD, REFUSAL)])
def test_a_refused_decommission_fails_the_start_with_cassandras_reason(tmp_path, refuses, reason):
    env = fake_nodetool(tmp_path, refuses)
    code, said = drain(env, "start")
    assert (code, said) == (1, f"nodetool decommission failed: {reason}")
    assert (tmp_path / "mode").read_text() == "NORMAL\n"


def test_a_decommission_that_leaves_is_started_then_done(tmp_path):
    env = fake_nodetool(tmp_path, LEAVES)
    code, said = drain(env, "start")
    assert code == 0 and said.startswith(("decommission started", "decommissioned")), said
    again = drain(env, "start")  # a second start (the orchestrator retried) starts nothing more
    assert again in ((0, "decommission under way (mode LEAVING)"), (0, "decommission under way (mode DECOMMISSIONED)"))
    assert wait_done(env) == (0, "decommissioned: its replicas are on the other nodes")


def test_a_decommission_that_fails_while_leaving_says_so_with_exit_3(tmp_path):
    env = fake_nodetool(tmp_path, FAILS)
    code, said = drain(env, "start")
    # It went LEAVING (started) or had already failed by the script's first look.
    assert (code, said) in ((0, "decommission started: streaming its replicas to the other nodes"),
                            (1, "nodetool decommission failed: Stream failed")), (code, said)
    assert wait_done(env) == (3, "nodetool decommission failed: Stream failed")


def test_done_without_a_decommission_under_way_fails(tmp_path):
    """Its start never ran (its node did not answer): the member is not leaving, so it stays."""
    assert drain(fake_nodetool(tmp_path, LEAVES), "done") == (3, "no decommission under way (mode NORMAL)")


@pytest.mark.parametrize("argv", [[], ["stop"]])
def test_anything_else_is_a_usage_error(tmp_path, argv):
    done = subprocess.run([str(SCRIPT), *argv], env=fake_nodetool(tmp_path, LEAVES), capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 2 and "usage: spindle-decommission start|done" in done.stderr
