"""A service that cannot reach PostgreSQL or Consul at start exits with one clear line."""
import os
import subprocess

import pytest

from tests.conftest import REPO
from tests.support.live_server import free_port as closed_port


def start_service(env_overrides: dict[str, str], platform_env: dict[str, str]) -> subprocess.CompletedProcess:
    env = {**os.environ, **platform_env, "SPINDLE_PORT": str(closed_port()), "SPINDLE_DEPENDENCY_TIMEOUT": "2",
           **env_overrides}
    return subprocess.run([REPO / ".venv/bin/spindle-disk-service"], env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("what,override,expected", [
    ("PostgreSQL", "SPINDLE_DATABASE_URL", "disk-service: cannot reach PostgreSQL at postgresql+psycopg://spindle:***@127.0.0.1:{port}/spindle"),
    ("Consul", "SPINDLE_CONSUL_URL", "disk-service: cannot reach Consul at http://127.0.0.1:{port}"),
])
def test_missing_dependency_fails_with_one_line_naming_it(platform_env, what, override, expected):
    port = closed_port()
    value = (f"postgresql+psycopg://spindle:pw@127.0.0.1:{port}/spindle" if what == "PostgreSQL"
             else f"http://127.0.0.1:{port}")
    result = start_service({override: value}, platform_env)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(expected.format(port=port)), lines[0]
