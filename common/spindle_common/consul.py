"""A small Consul HTTP API client: service registration with health checks, and health reads."""
import os
import secrets
from typing import Any

import httpx

from spindle_common.tls import default_tls

# Consul's ACL token of Spindle's services (``deploy/lib/consul.sh``): it may register and deregister
# services; without it Consul only lets one read.
TOKEN_ENV = "SPINDLE_CONSUL_TOKEN"


class ConsulClient:
    """Talks to the local Consul agent's HTTP API, with ``token`` (default: ``$SPINDLE_CONSUL_TOKEN``)."""

    def __init__(self, url: str, timeout: float = 5.0, token: str | None = None):
        self.url = url.rstrip("/")
        token = os.environ.get(TOKEN_ENV, "") if token is None else token
        self._http = httpx.Client(base_url=self.url, timeout=timeout, verify=default_tls(),
                                  headers={"X-Consul-Token": token} if token else None)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "ConsulClient":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def leader(self) -> str:
        """The address of the Raft leader; raises when Consul has none or is unreachable."""
        response = self._http.get("/v1/status/leader")
        response.raise_for_status()
        leader = response.json()
        if not leader:
            raise RuntimeError("Consul has no leader yet")
        return leader

    def register_service(
        self,
        name: str,
        service_id: str,
        address: str,
        port: int,
        check: dict[str, Any] | None,
        tags: list[str] | None = None,
        meta: dict[str, str] | None = None,
    ) -> None:
        """Register (or register again) a service with its health check.

        The check gets an id of its own each time, replacing the service's earlier checks: Consul
        applies a check's result by check id, so a run of the earlier check still in flight (a TCP
        dial waiting out its timeout) would otherwise land on the new check — a name registered
        passing turned critical a moment later by a probe made before the member was up."""
        body: dict[str, Any] = {
            "ID": service_id,
            "Name": name,
            "Address": address,
            "Port": port,
            "Tags": tags or [],
            "Meta": meta or {},
        }
        if check:
            # check may set Interval
            body["Check"] = {"CheckID": f"{service_id}-check-{secrets.token_hex(4)}", "Interval": "5s",
                             "Timeout": "2s", **check}
        self._http.put("/v1/agent/service/register", params={"replace-existing-checks": "true"},
                       json=body).raise_for_status()

    @staticmethod
    def http_check(url: str) -> dict[str, Any]:
        return {"Name": f"HTTP {url}", "HTTP": url}

    @staticmethod
    def tcp_check(address: str, port: int, interval: str = "5s") -> dict[str, Any]:
        return {"Name": f"TCP {address}:{port}", "TCP": f"{address}:{port}", "Interval": interval}

    def deregister_service(self, service_id: str) -> None:
        """Remove a service; one that is already gone (404) is fine: callers may race to remove it."""
        response = self._http.put(f"/v1/agent/service/deregister/{service_id}")
        if response.status_code != 404:
            response.raise_for_status()

    def service_health(self, name: str) -> list[dict[str, Any]]:
        """Health entries (node, service, checks) of every instance of ``name``."""
        response = self._http.get(f"/v1/health/service/{name}")
        response.raise_for_status()
        return response.json()

    def services(self) -> dict[str, list[str]]:
        """Catalog service names with their tags."""
        response = self._http.get("/v1/catalog/services")
        response.raise_for_status()
        return response.json()
