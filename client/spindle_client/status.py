"""Platform status as Consul sees it: every Spindle service and the health of its checks."""
from dataclasses import dataclass

import httpx

SERVICES = ("api-server", "orchestrator", "scheduler", "disk-service", "network-service")


@dataclass
class ServiceStatus:
    name: str
    status: str  # passing | warning | critical | missing
    instances: list[str]
    detail: str


def worst_status(statuses: list[str]) -> str:
    for level in ("critical", "warning"):
        if level in statuses:
            return level
    return "passing"


def service_statuses(consul_url: str, timeout: float = 5.0) -> list[ServiceStatus]:
    """Health of each known service; a service with no registered instance is ``missing``."""
    result = []
    with httpx.Client(base_url=consul_url.rstrip("/"), timeout=timeout) as http:
        for name in SERVICES:
            entries = http.get(f"/v1/health/service/{name}").raise_for_status().json()
            if not entries:
                result.append(ServiceStatus(name, "missing", [], "not registered in Consul"))
                continue
            checks = [c for e in entries for c in e["Checks"]]
            instances = [f'{e["Service"]["Address"]}:{e["Service"]["Port"]}' for e in entries]
            failing = [c["Output"].strip() for c in checks if c["Status"] != "passing"]
            result.append(ServiceStatus(name, worst_status([c["Status"] for c in checks]), instances,
                                        (failing[0].splitlines() or [""])[0] if failing else ""))
    return result
