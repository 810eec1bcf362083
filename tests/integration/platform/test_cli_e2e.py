"""The ``spindle`` CLI against the running platform, as a user would type it: login, products,
launch with options and live progress, clusters, show, events, delete — and its errors."""
import json
import os
import subprocess

import pytest

from tests.conftest import REPO
from tests.integration.platform.cluster_checks import assert_nothing_left, running_executors, wait_settled
from tests.support.live_users import API_URL, live_user


@pytest.fixture
def user(database_url):
    with live_user(database_url, "cli") as client:
        yield client


@pytest.fixture
def spindle(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("SPINDLE_URL", "SPINDLE_TOKEN")}
    env["XDG_CONFIG_HOME"] = str(tmp_path)

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([REPO / ".venv/bin/spindle", *args], env=env, input=stdin, capture_output=True,
                              text=True, timeout=300)

    return run


def test_cli_launches_follows_shows_and_deletes_a_cluster(user, spindle, platform_env):
    assert spindle("products").returncode == 2, "not logged in yet"
    login = spindle("login", "--url", API_URL, "--token", user.token)
    assert login.returncode == 0 and f"as {user.username}" in login.stdout

    products = spindle("products", "--json")
    assert {p["name"] for p in json.loads(products.stdout)} >= {"spark", "static-web"}

    bad = spindle("launch", "static-web", "1.0", "--opt", "roles.server.count=99")
    assert bad.returncode == 1 and "INVALID_OPTIONS" in bad.stderr and "roles.server.count" in bad.stderr

    launched = spindle("launch", "static-web", "1.0", "--opt", "roles.server.count=2", "--follow")
    cluster_id = launched.stdout.split()[1]
    try:
        assert launched.returncode == 0, launched.stdout + launched.stderr
        assert f"{cluster_id} is RUNNING" in launched.stdout and "CONFIGURING" in launched.stdout

        listed = json.loads(spindle("clusters", "--json", "--state", "RUNNING").stdout)
        assert [c["id"] for c in listed] == [cluster_id]
        shown = spindle("show", cluster_id)
        assert shown.returncode == 0 and "state    RUNNING" in shown.stdout and shown.stdout.count("TASK_RUNNING") == 2
        assert len(running_executors([f"{cluster_id}-server-1", f"{cluster_id}-server-2"])) == 2
        events = json.loads(spindle("events", cluster_id, "--json").stdout)
        assert [e["state"] for e in events if e["step"] == "cluster"][-1] == "RUNNING"
    finally:
        deleted = spindle("delete", cluster_id)
    assert deleted.returncode == 0 and f"deleting {cluster_id}" in deleted.stdout
    cluster = wait_settled(user, user.find_cluster(user.username, cluster_id), ("DESTROYED",))
    assert_nothing_left(platform_env, cluster)
    missing = spindle("show", "no-such-cluster")
    assert missing.returncode == 1 and "CLUSTER_NOT_FOUND" in missing.stderr
