"""A master with credentials authenticates like Mesos with --authenticate_http_frameworks and
--authenticate_http_readonly (HTTP Basic): no scheduler or operator call without a known principal
and its secret, a framework only as the principal it authenticated as; its agents' executors
authenticate with the token their agent gave them (--authenticate_http_executors)."""
import json

import httpx
import pytest

from tests.integration.mesos.conftest import Recorder, framework, operator
from tests.integration.mesos.test_conformance import launch, states

OURS = ("spindle", "s3cret-of-spindle")
OTHER = ("intruder", "another-secret")
SUBSCRIBE = {"type": "SUBSCRIBE", "subscribe": {"framework_info": {"user": "root", "name": "x", "roles": ["spindle"]}}}


@pytest.fixture
def guarded(make_cluster, tmp_path):
    """A master (and one agent) with two principals; skipped against a real master, whose
    credentials this suite cannot set."""
    credentials = tmp_path / "credentials.json"
    credentials.write_text(json.dumps({"credentials": [{"principal": p, "secret": s} for p, s in (OURS, OTHER)]}))
    cluster = make_cluster(1, credential=OURS, SPINDLE_MESOS_CREDENTIALS=str(credentials))
    cluster.require_own_processes("set the master's credentials")
    return cluster


def subscribe(url: str, auth=None, principal: str | None = None, framework_id: str | None = None) -> httpx.Response:
    call = json.loads(json.dumps(SUBSCRIBE))
    if principal:
        call["subscribe"]["framework_info"]["principal"] = principal
    if framework_id:
        call["framework_id"] = {"value": framework_id}
    with httpx.stream("POST", f"http://{url}/api/v1/scheduler", json=call, auth=auth, timeout=10) as response:
        if response.status_code == 200:  # the event stream opened: read its first event, then hang up
            next(response.iter_raw())
        else:
            response.read()
        return response


@pytest.mark.parametrize("auth", [None, ("spindle", "wrong"), ("nobody", "s3cret-of-spindle")])
def test_operator_and_scheduler_calls_without_a_valid_credential_are_401(guarded, auth):
    for call in ("GET_FRAMEWORKS", "GET_TASKS", "GET_AGENTS", "GET_STATE"):
        answer = httpx.post(f"http://{guarded.url}/api/v1", json={"type": call}, auth=auth)
        assert answer.status_code == 401, (call, answer.text)
        assert answer.headers["WWW-Authenticate"].startswith("Basic")
    refused = subscribe(guarded.url, auth, principal=auth[0] if auth else None)
    assert refused.status_code == 401
    teardown = httpx.post(f"http://{guarded.url}/api/v1/scheduler", auth=auth,
                          json={"type": "TEARDOWN", "framework_id": {"value": "any"}})
    assert teardown.status_code == 401
    assert operator(guarded.url, "GET_FRAMEWORKS", OURS)["get_frameworks"].get("frameworks", []) == []


def test_a_framework_is_only_the_principal_it_authenticated_as(guarded):
    assert subscribe(guarded.url, OURS).status_code == 403, "FrameworkInfo.principal missing"
    assert subscribe(guarded.url, OURS, principal="intruder").status_code == 403, "someone else's principal"
    recorder = Recorder()
    with framework(guarded.url, recorder, credential=OURS) as driver:
        recorder.wait(lambda r: r.framework_id)
        frameworks = operator(guarded.url, "GET_FRAMEWORKS", OURS)["get_frameworks"]["frameworks"]
        assert [f["framework_info"]["principal"] for f in frameworks] == ["spindle"]
        # Another principal can neither take the framework over (a failover SUBSCRIBE under its id)
        # nor call for it, even knowing its stream id.
        hijack = subscribe(guarded.url, OTHER, principal="intruder", framework_id=recorder.framework_id)
        assert hijack.status_code == 403
        teardown = httpx.post(f"http://{guarded.url}/api/v1/scheduler", auth=OTHER,
                              headers={"Mesos-Stream-Id": driver.stream_id},
                              json={"type": "TEARDOWN", "framework_id": {"value": recorder.framework_id}})
        assert teardown.status_code == 403, teardown.text
        assert len(operator(guarded.url, "GET_FRAMEWORKS", OURS)["get_frameworks"]["frameworks"]) == 1


def test_executors_authenticate_with_their_agent_token(guarded):
    recorder = Recorder()
    with framework(guarded.url, recorder, credential=OURS) as driver:
        recorder.wait(lambda r: r.offers)
        launch(driver, recorder.offers[0], "t-auth")
        recorder.wait(lambda r: "TASK_RUNNING" in states(r, "t-auth"))  # its executor presented its token
        agent = next(iter(guarded.agents.values()))
        ids = {"framework_id": {"value": recorder.framework_id}, "executor_id": {"value": "t-auth"}}
        status = {"task_id": {"value": "t-auth"}, "state": "TASK_FINISHED", "uuid": "AAAAAAAAAAAAAAAAAAAAAA=="}
        for headers in ({}, {"Authorization": "Bearer 0000"}, {"Authorization": f"Basic {'x' * 8}"}):
            impostor = httpx.post(f"http://{agent.address}/api/v1/executor", headers=headers,
                                  json={**ids, "type": "UPDATE", "update": {"status": status}})
            assert impostor.status_code == 401, impostor.text
            resubscribe = httpx.post(f"http://{agent.address}/api/v1/executor", headers=headers,
                                     json={**ids, "type": "SUBSCRIBE", "subscribe": {}})
            assert resubscribe.status_code == 401
        tasks = operator(guarded.url, "GET_TASKS", OURS)["get_tasks"]["tasks"]
        assert [(t["task_id"]["value"], t["state"]) for t in tasks] == [("t-auth", "TASK_RUNNING")]
