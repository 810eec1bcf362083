"""What the agent's container-logs route accepts (names of Spindle containers only, bounded tail, a
unix time), and that it refuses callers without the internal token and names that are not Spindle's
before touching Docker."""
import pytest
from fastapi.testclient import TestClient

from spindle_mesos_embedded.agent_app import build_agent_app
from spindle_mesos_embedded.container_logs import MAX_TAIL, check_request


@pytest.mark.parametrize(("name", "tail", "since", "problem"), [
    ("spindle-c0123456789-worker-1", 200, None, None),
    ("spindle-job-j0123456789", None, 1700000000.5, None),
    ("spindle-c1-worker-1", 0, 0, None),
    ("other-container", 10, None, "not a Spindle container name"),
    ("spindle-", 10, None, "not a Spindle container name"),
    ("spindle-../x", 10, None, "not a Spindle container name"),
    ("spindle-C1", 10, None, "not a Spindle container name"),
    ("spindle-c1", -1, None, "tail must be"),
    ("spindle-c1", MAX_TAIL + 1, None, "tail must be"),
    ("spindle-c1", 1, -5, "since must be"),
    ("spindle-c1", 1, 1e20, "since must be"),
    ("spindle-c1", 1, float("nan"), "since must be"),
])
def test_check_request(name, tail, since, problem):
    found = check_request(name, tail, since)
    assert (found is None) if problem is None else (problem in found)


class FakeAgent:
    """Only what the route reads of an agent: its internal token."""

    token = "agent-internal-token"


def docker_never():
    raise AssertionError("Docker must not be asked")


@pytest.mark.parametrize(("headers", "path", "status"), [
    ({}, "/spindle/v1/containers/spindle-c1-worker-1/logs", 401),
    ({"Authorization": "Bearer wrong"}, "/spindle/v1/containers/spindle-c1-worker-1/logs", 401),
    ({"Authorization": "Bearer agent-internal-token"}, "/spindle/v1/containers/postgres/logs", 400),
    ({"Authorization": "Bearer agent-internal-token"}, "/spindle/v1/containers/spindle-c1/logs?tail=99999", 400),
])
def test_refused_before_docker(headers, path, status):
    app = build_agent_app(FakeAgent(), docker_client=docker_never)  # type: ignore[arg-type]
    assert TestClient(app).get(path, headers=headers).status_code == status
