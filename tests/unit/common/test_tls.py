"""Clients the services make per request share one TLS context (spindle_common/tls.py): building one
costs ~50 ms of CPU (OpenSSL 3's context and the CA bundle), which each request paid before."""
import ssl

import httpx

from spindle_common.clients import ServiceClient
from spindle_common.consul import ConsulClient
from spindle_common.tls import default_tls


def context_of(client: httpx.Client):
    return client._transport._pool._ssl_context  # type: ignore[attr-defined]


def test_every_internal_client_uses_the_one_context():
    clients = [ServiceClient("http://127.0.0.1:1", "t", "a")._http, ServiceClient("http://127.0.0.1:2", "t", "b")._http,
               ConsulClient("http://127.0.0.1:3", token="")._http]
    assert all(context_of(c) is default_tls() for c in clients)
    assert context_of(httpx.Client()) is not default_tls()  # without it: httpx's own (below)


def test_the_tests_own_clients_share_one_context():
    """tests/conftest.py: httpx would make one per client, ~50 ms of CPU each (CI run 26)."""
    assert context_of(httpx.Client()) is context_of(httpx.Client())
    assert context_of(httpx.Client(verify=False)).verify_mode == ssl.CERT_NONE  # what asks for its own gets it


def test_the_context_verifies_as_httpx_would():
    ctx = default_tls()
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname

