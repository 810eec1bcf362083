"""A member that dies while its cluster runs is replaced by Spindle (products that ask for it):
the same member comes back as a new container on fresh (wiped) disks with the same floating IP
and DNS name, the cluster is DEGRADED (never FAILED) until it is back, then RUNNING again, and the
timeline says what happened."""
import time

import docker
import httpx

from tests.integration.platform.cluster_checks import assert_nothing_left, wait_settled
from tests.support.live_users import live_user


def member_containers(member_id: str) -> list:
    return docker.from_env().containers.list(filters={"label": f"io.spindle.member={member_id}"})


def test_a_killed_member_comes_back_with_its_ip_on_fresh_disks(database_url, platform_env):
    with live_user(database_url, "heal") as user:
        cluster = wait_settled(user, user.launch("static-web", "1.0", {"roles": {"server": {"count": 2}}}),
                               ("RUNNING", "FAILED"), timeout=180)
        try:
            assert cluster["state"] == "RUNNING", cluster
            victim = cluster["members"][0]
            [old] = member_containers(victim["member_id"])
            old.exec_run(["sh", "-c", "echo before > /data/1/marker"])
            old.kill()  # the member dies under the cluster

            deadline = time.monotonic() + 120
            while True:
                cluster = user.cluster(cluster)
                member = next(m for m in cluster["members"] if m["member_id"] == victim["member_id"])
                replaced = [c for c in member_containers(victim["member_id"]) if c.id != old.id]
                if member["state"] == "TASK_RUNNING" and replaced and cluster["state"] == "RUNNING":
                    break
                assert cluster["state"] in ("RUNNING", "DEGRADED"), cluster  # never FAILED while it is replaced
                assert time.monotonic() < deadline, member
                time.sleep(0.5)
            [new] = replaced
            assert member["ip"] == victim["ip"] and member["dns_name"] == victim["dns_name"]
            assert new.exec_run(["ls", "/data/1/marker"]).exit_code != 0, "fresh disk: the old file is gone"
            page = httpx.get(f"http://{member['ip']}:8000/index.html", timeout=5).text
            assert f"of {cluster['id']}</h1>" in page
            assert member["replacements"] == 1
            replaced_events = [e for e in user.events(cluster) if e["state"] == "REPLACED"]
            assert [e["member_id"] for e in replaced_events] == [victim["member_id"]]
            assert replaced_events[0]["message"].startswith(
                "replacement 1 after TASK_FAILED: container exited with code 137")
            moves = [e["state"] for e in user.events(cluster) if e["step"] == "cluster"]
            assert moves[-2:] == ["DEGRADED", "RUNNING"], moves
        finally:
            user.delete(cluster)
            cluster = wait_settled(user, cluster, ("DESTROYED",), timeout=180)
        assert_nothing_left(platform_env, cluster)
