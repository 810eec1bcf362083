"""The platform's Mesos master and agent refuse callers without credentials (issue 15): before,
any local account could list frameworks, SUBSCRIBE as a framework and LAUNCH a shell command as
root, or TEARDOWN Spindle's framework and with it every task. Now scheduler and operator calls need
the scheduler's principal and secret (0600 in spindle.env), and the agent's executor API the token
it gave each executor."""
import httpx
import pytest

from tests.integration.platform.cluster_checks import wait_settled
from tests.support.live_users import live_user
from tests.support.mesos_operator import MESOS_OPERATOR, mesos_credential, mesos_operator

MASTER = MESOS_OPERATOR.removesuffix("/api/v1")
AGENT = "http://127.0.0.1:5051"
WRONG = [None, ("spindle", "not-the-secret"), ("root", "")]


@pytest.mark.parametrize("auth", WRONG)
def test_operator_calls_need_the_credential(auth):
    for call in ("GET_FRAMEWORKS", "GET_TASKS", "GET_AGENTS", "GET_STATE"):
        answer = httpx.post(f"{MASTER}/api/v1", json={"type": call}, auth=auth, timeout=10)
        assert answer.status_code == 401, (call, answer.status_code, answer.text)


@pytest.mark.parametrize("auth", WRONG)
def test_nobody_subscribes_launches_or_tears_down_without_it(auth):
    frameworks = mesos_operator("GET_FRAMEWORKS")["get_frameworks"]["frameworks"]
    [spindle] = [f for f in frameworks if f["framework_info"]["name"] == "spindle"]
    framework_id = spindle["framework_info"]["id"]
    info = {"user": "root", "name": "intruder", "roles": ["spindle"], "principal": auth[0] if auth else "x"}
    subscribe = httpx.post(f"{MASTER}/api/v1/scheduler", auth=auth, timeout=10,
                           json={"type": "SUBSCRIBE", "subscribe": {"framework_info": info}})
    assert subscribe.status_code == 401
    takeover = httpx.post(f"{MASTER}/api/v1/scheduler", auth=auth, timeout=10, json={
        "type": "SUBSCRIBE", "framework_id": framework_id,
        "subscribe": {"framework_info": {**info, "name": "spindle", "id": framework_id}}})
    assert takeover.status_code == 401
    for call in ({"type": "TEARDOWN"},
                 {"type": "ACCEPT", "accept": {"offer_ids": [{"value": "any"}], "operations": [{
                     "type": "LAUNCH", "launch": {"task_infos": [{"name": "sh", "task_id": {"value": "sh"},
                                                                  "command": {"value": "id"}}]}}]}}):
        answer = httpx.post(f"{MASTER}/api/v1/scheduler", auth=auth, timeout=10,
                            json={**call, "framework_id": framework_id})
        assert answer.status_code == 401, answer.text
    # Spindle's framework is still there, still connected.
    after = mesos_operator("GET_FRAMEWORKS")["get_frameworks"]["frameworks"]
    assert [f["framework_info"]["id"] for f in after if f["framework_info"]["name"] == "spindle"] == [framework_id]
    assert all(f["active"] for f in after if f["framework_info"]["name"] == "spindle")


def test_the_credential_is_the_schedulers_and_works():
    principal, secret = mesos_credential() or ("", "")
    assert principal == "spindle" and len(secret) >= 32
    assert mesos_operator("GET_HEALTH")["get_health"]["healthy"] is True


def test_the_agents_executor_api_needs_an_executors_token(database_url):
    with live_user(database_url, "mesosauth") as user:
        cluster = wait_settled(user, user.launch("static-web", "1.0", {}), ("RUNNING", "FAILED"), timeout=180)
        try:
            assert cluster["state"] == "RUNNING", cluster
            member = cluster["members"][0]["member_id"]
            [task] = [t for t in mesos_operator("GET_TASKS")["get_tasks"].get("tasks", []) if t["name"] == member]
            ids = {"framework_id": task["framework_id"], "executor_id": task["executor_id"]}
            for headers in ({}, {"Authorization": "Bearer forged"}):
                # A forged update (the member "finished") and a second SUBSCRIBE (stealing its kills).
                forged = {**ids, "type": "UPDATE", "update": {"status": {
                    "task_id": task["task_id"], "state": "TASK_FINISHED", "uuid": "AAAAAAAAAAAAAAAAAAAAAA=="}}}
                assert httpx.post(f"{AGENT}/api/v1/executor", json=forged, headers=headers,
                                  timeout=10).status_code == 401
                steal = {**ids, "type": "SUBSCRIBE", "subscribe": {}}
                assert httpx.post(f"{AGENT}/api/v1/executor", json=steal, headers=headers,
                                  timeout=10).status_code == 401
            assert user.cluster(cluster)["members"][0]["state"] == "TASK_RUNNING"
        finally:
            user.delete(cluster)
            wait_settled(user, cluster, ("DESTROYED",), timeout=180)
