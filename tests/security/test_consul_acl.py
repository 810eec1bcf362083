"""Consul with ACLs (issue 15): on the running platform, a caller without Spindle's token (any local
account, or anything else that reaches the agent) can read services and resolve names, but cannot
register a service, deregister one of Spindle's, or write the KV store; Spindle's services' token can
register and deregister, and the management token is kept private."""
import os
import stat
import uuid

import dns.resolver
import httpx
import pytest

from spindle_common.consul import TOKEN_ENV, ConsulClient
from tests.conftest import STATE_DIR


@pytest.fixture(scope="module")
def anonymous(consul_url):
    with httpx.Client(base_url=consul_url, timeout=10) as client:
        yield client


def spindle_service_id(anonymous: httpx.Client, name: str) -> str:
    services = anonymous.get("/v1/agent/services").json()
    return next(sid for sid, s in services.items() if s["Service"] == name)


def test_without_a_token_nothing_is_written(anonymous):
    name = f"intruder-{uuid.uuid4().hex[:8]}"
    assert anonymous.put("/v1/agent/service/register", json={"Name": name, "ID": name}).status_code == 403
    assert anonymous.put(f"/v1/kv/{name}", content=b"x").status_code == 403
    victim = spindle_service_id(anonymous, "api-server")
    assert anonymous.put(f"/v1/agent/service/deregister/{victim}").status_code == 403
    assert name not in anonymous.get("/v1/catalog/services").json()
    # still there, still passing
    health = anonymous.get("/v1/health/service/api-server", params={"passing": "true"}).json()
    assert [h["Service"]["ID"] for h in health] == [victim]


def test_reads_and_dns_need_no_token(anonymous):
    assert "orchestrator" in anonymous.get("/v1/catalog/services").json()
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers, resolver.port = ["127.0.0.1"], 8600
    assert [a.to_text() for a in resolver.resolve("api-server.service.spindle", "A")] == ["127.0.0.1"]


def test_the_services_token_registers_and_deregisters(platform_env, consul_url):
    assert platform_env.get(TOKEN_ENV), "deploy/up gives the services Consul's token in spindle.env"
    name = f"acl-test-{uuid.uuid4().hex[:8]}"
    with ConsulClient(consul_url, token=platform_env[TOKEN_ENV]) as consul:
        consul.register_service(name=name, service_id=name, address="127.0.0.1", port=9, check=None)
        try:
            assert name in consul.services()
        finally:
            consul.deregister_service(name)
        assert name not in consul.services()


def test_the_management_token_is_private():
    for name in ("consul-management-token", "consul-services-token", "consul-acl.hcl"):
        mode = os.stat(STATE_DIR / name).st_mode
        assert stat.S_IMODE(mode) & 0o077 == 0, (name, oct(mode))
