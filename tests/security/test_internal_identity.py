"""The running platform's internal services take actor and role only from an identity signed with
the identity key: a caller holding the internal token but not the key — the old caller-chosen
``X-Spindle-Role`` headers, an identity signed with another key or with the nodes' key, a signed one
with its role swapped, an expired one — is 401 at every service; a signed identity of the wrong
role is 403. What a node holds (the token, the nodes' key) makes it a node: it reads the pools and
its own node, never another node's, never what needs an admin or a service."""
import time

import httpx
import pytest

from tests.support.internal import forged_headers, internal_headers

# A read of each inventory service that admins may do and users may not (services read disk-service's
# nodes too, nodes the pools), and what the orchestrator and scheduler allow services.
ADMIN_READS = {"disk-service": "http://127.0.0.1:8083/nodes", "network-service": "http://127.0.0.1:8084/pools"}
SERVICE_READS = {"orchestrator": "http://127.0.0.1:8081/clusters?page_size=1",
                 "scheduler": "http://127.0.0.1:8082/clusters?origin=identity-test"}
READS = {**ADMIN_READS, **SERVICE_READS}


def get(url: str, headers: dict[str, str]) -> httpx.Response:
    """A GET, once more if the service was being restarted by someone else just then."""
    for _ in range(30):
        try:
            response = httpx.get(url, headers=headers, timeout=30)
        except httpx.TransportError:
            time.sleep(2)
            continue
        if response.status_code != 503:
            return response
        time.sleep(2)
    raise AssertionError(f"{url} stayed unreachable")


@pytest.mark.parametrize("service", sorted(READS))
def test_the_signed_identity_is_accepted(service, platform_env):
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    assert get(READS[service], internal_headers(token, "identity-test", "admin")).status_code == 200


@pytest.mark.parametrize("service", sorted(READS))
def test_a_forged_role_is_401_at_every_service(service, platform_env):
    token = platform_env["SPINDLE_INTERNAL_TOKEN"]
    for headers in forged_headers(token, "mallory", "admin"):
        refused = get(READS[service], headers)
        assert refused.status_code == 401, (service, headers, refused.text)
        assert refused.json()["error"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("service", sorted(READS))
def test_a_signed_identity_without_the_token_is_401(service):
    assert get(READS[service], internal_headers("not-the-token", "mallory", "admin")).status_code == 401


@pytest.mark.parametrize("service", sorted(READS))
def test_a_signed_user_is_403_where_admins_or_services_are_needed(service, platform_env):
    refused = get(READS[service], internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], "u1", "user"))
    assert refused.status_code == 403 and refused.json()["error"]["details"] == {"role": "user"}


def as_node(platform_env, actor: str) -> dict[str, str]:
    return internal_headers(platform_env["SPINDLE_INTERNAL_TOKEN"], actor, "node",
                            platform_env["SPINDLE_NODE_IDENTITY_KEY"])


def test_a_node_is_a_node_only(platform_env):
    node = httpx.get("http://127.0.0.1:8083/nodes", headers=internal_headers(
        platform_env["SPINDLE_INTERNAL_TOKEN"], "identity-test", "admin"), timeout=30).json()[0]["name"]
    assert get("http://127.0.0.1:8084/pools", as_node(platform_env, f"node-agent/{node}")).status_code == 200
    own = get(f"http://127.0.0.1:8083/nodes/{node}", as_node(platform_env, f"node-agent/{node}"))
    assert own.status_code == 200 and own.json()["name"] == node
    other = get(f"http://127.0.0.1:8083/nodes/{node}", as_node(platform_env, "node-agent/some-other-node"))
    assert other.status_code == 403
    for service in sorted(SERVICE_READS):  # what services and admins do
        refused = get(SERVICE_READS[service], as_node(platform_env, f"node-agent/{node}"))
        assert refused.status_code == 403 and refused.json()["error"]["details"] == {"role": "node"}
    assert get("http://127.0.0.1:8083/nodes", as_node(platform_env, f"node-agent/{node}")).status_code == 403
