"""The orchestrator's IP sweep on its own database and the running network-service and Consul: IPs
and DNS names still held for a DESTROYED cluster, a cleaned-up FAILED one or a finished job are
freed; those of a live cluster, of a running job and of owners this database does not know (another
orchestrator's, an admin's) are kept; holdings younger than the grace period are not judged."""
import uuid

import httpx
import pytest

from spindle_common import migrations
from spindle_common.clients import NetworkClient
from spindle_common.db import session_factory
from spindle_orchestrator.models import Cluster, Job
from spindle_orchestrator.sweeper import IpSweeper, judge_ips

NETWORK = "http://127.0.0.1:8084"


def cluster_id() -> str:
    return "c" + uuid.uuid4().hex[:10]


@pytest.mark.parametrize(("owner", "expected"), [
    ("c0123456789-server-0", "release"),  # DESTROYED
    ("c1111111111-server-0", "release"),  # FAILED, cleaned up
    ("c2222222222-server-0", "kept"),  # FAILED, not cleaned up yet: its own round frees it
    ("c3333333333-worker-2", "kept"),  # RUNNING
    ("c4444444444-server-0", "kept"),  # PENDING: a launch under way holds its IPs
    ("job-j0123456789", "release"),  # SUCCEEDED
    ("job-j1111111111", "kept"),  # RUNNING
    ("c9999999999-server-0", "foreign"),  # no such cluster here
    ("job-j9999999999", "foreign"),
    ("e2e-m0", "foreign"),  # not a name this orchestrator gives
    ("c0123456789", "foreign"),  # a cluster id alone names no member
])
def test_owners_are_judged_by_their_cluster_or_job(owner, expected):
    clusters = {"c0123456789": ("DESTROYED", False), "c1111111111": ("FAILED", True),
                "c2222222222": ("FAILED", False), "c3333333333": ("RUNNING", False), "c4444444444": ("PENDING", False)}
    jobs = {"j0123456789": "SUCCEEDED", "j1111111111": "RUNNING"}
    verdict = judge_ips([owner], clusters, jobs)
    assert {k for k in ("release", "kept", "foreign") if getattr(verdict, k) == [owner]} == {expected}


def test_the_sweep_frees_settled_holders_ips_and_names_only(fresh_database, platform_env):
    migrations.upgrade("spindle_orchestrator", fresh_database)
    sessions = session_factory(fresh_database)
    gone, live, failed = cluster_id(), cluster_id(), cluster_id()
    job_done, job_running = "j" + uuid.uuid4().hex[:10], "j" + uuid.uuid4().hex[:10]
    with sessions.begin() as session:
        for cid, state, cleaned in ((gone, "DESTROYED", False), (live, "RUNNING", False), (failed, "FAILED", True)):
            session.add(Cluster(id=cid, owner="alice", owner_id="alice", product="static-web", version="1.0",
                                options={}, state=state, cleaned_up=cleaned))
        session.flush()
        for jid, state in ((job_done, "SUCCEEDED"), (job_running, "RUNNING")):
            session.add(Job(id=jid, cluster_id=live, owner="alice", state=state, main="main.py"))
    foreign = f"sweep-foreign-{uuid.uuid4().hex[:6]}"
    owners = {cid: [f"{cid}-server-{i}" for i in range(2)] for cid in (gone, live, failed)}
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    consul = platform_env["SPINDLE_CONSUL_URL"]
    with NetworkClient(NETWORK, token, actor="sweep-test") as network:
        try:
            for cid, names in owners.items():
                network.allocate_batch("default", [{"owner": o, "dns_name": o.removeprefix(f"{cid}-")} for o in names],
                                       dns_service=cid)
            for owner in (f"job-{job_done}", f"job-{job_running}", foreign):
                network.allocate(owner, "default")
            assert len(httpx.get(f"{consul}/v1/catalog/service/{gone}").json()) == 2

            young = IpSweeper(sessions, network, grace_s=3600).run()
            assert young["freed"] == [], "nothing is judged within the grace period"

            found = IpSweeper(sessions, network, grace_s=0).run()
            assert sorted(found["freed"]) == sorted(owners[gone] + owners[failed] + [f"job-{job_done}"])
            assert foreign in found["foreign"]
            held = {h["owner"] for h in network.request("GET", "/allocations/held")}
            assert held >= {*owners[live], f"job-{job_running}", foreign}
            assert not held & {*owners[gone], *owners[failed], f"job-{job_done}"}
            assert httpx.get(f"{consul}/v1/catalog/service/{gone}").json() == [], "DNS names gone with the IPs"
            assert len(httpx.get(f"{consul}/v1/catalog/service/{live}").json()) == 2, "a live cluster's names stay"
        finally:
            network.release_many([*owners[gone], *owners[live], *owners[failed], f"job-{job_done}",
                                  f"job-{job_running}", foreign])
