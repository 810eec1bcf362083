"""The orchestrator's sweep: tasks the scheduler still runs for a cluster the orchestrator's
database no longer knows (a restored backup, a hand-deleted row) are killed, and everything they
held — containers, executors, disks, IPs — is given back."""
import time

import httpx
from sqlalchemy import delete

from spindle_common import migrations
from spindle_common.clients import SchedulerClient
from spindle_common.db import session_factory
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.main import build_app
from spindle_orchestrator.models import Cluster
from spindle_orchestrator.worker import running_worker
from tests.integration.orchestrator.test_cluster_lifecycle import wait_state
from tests.integration.platform.cluster_checks import assert_nothing_left
from tests.support.internal import internal_headers
from tests.support.live_server import serve

TERMINAL = ("TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST", "TASK_ERROR", "TASK_DROPPED", "TASK_GONE")


def test_tasks_of_a_cluster_unknown_to_the_orchestrator_are_killed(fresh_database, platform_env):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    settings = Settings(database_url=fresh_database, internal_token=platform_env["SPINDLE_INTERNAL_TOKEN"],
                        consul_url=platform_env["SPINDLE_CONSUL_URL"], sweep_interval_s=1.0,
                        scheduler_database_url=platform_env["SPINDLE_DATABASE_URL"])
    headers = internal_headers(settings.internal_token, "api-server", "service")
    app = build_app(settings)
    with running_worker(app), serve(app) as url, httpx.Client(base_url=url, timeout=30) as http, \
            SchedulerClient(settings.scheduler_url, settings.internal_token, actor="sweep-test") as scheduler:
        cluster_id = http.post("/clusters", headers=headers, json={
            "owner": "alice", "owner_id": "alice", "product": "static-web", "version": "1.0",
            "options": {}}).json()["id"]
        cluster = wait_state(http, headers, cluster_id, ("RUNNING", "FAILED"))
        assert cluster["state"] == "RUNNING", cluster
        assert scheduler.unfinished_clusters(settings.origin) == {cluster_id: 1}

        with session_factory(fresh_database).begin() as session:  # the database forgets the cluster
            session.execute(delete(Cluster).where(Cluster.id == cluster_id))

        deadline = time.monotonic() + 60
        while any(t["state"] not in TERMINAL for t in scheduler.tasks(cluster_id)) and time.monotonic() < deadline:
            time.sleep(0.3)
        assert [t["state"] for t in scheduler.tasks(cluster_id)] == ["TASK_KILLED"]
        assert scheduler.unfinished_clusters(settings.origin) == {}
    assert_nothing_left(platform_env, cluster)
