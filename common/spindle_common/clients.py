"""Clients for calling one Spindle service from another (internal token, signed caller identity, envelope)."""
from collections.abc import Generator
from typing import Any

import httpx

from spindle_common.auth import Role, internal_headers
from spindle_common.errors import ApiError
from spindle_common.tls import default_tls


class InternalAuth(httpx.Auth):
    """The internal token and ``actor``'s identity in ``role``, signed anew for every request (so a
    long-lived client never sends an expired one); ``identity_key`` None: the environment's for ``role``."""

    def __init__(self, internal_token: str, actor: str, role: Role, identity_key: str | None = None):
        self.token, self.actor, self.role, self.identity_key = internal_token, actor, role, identity_key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers.update(internal_headers(self.token, self.actor, self.role, self.identity_key))
        yield request


class ServiceClient:
    """JSON over HTTP to an internal service; its error envelope comes back as an ``ApiError``."""

    def __init__(self, base_url: str, internal_token: str, actor: str, role: Role = "service", timeout: float = 30.0,
                 identity_key: str | None = None):
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout, verify=default_tls(),
                                  auth=InternalAuth(internal_token, actor, role, identity_key))

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """The JSON answer (None when empty)."""
        response = self.request_raw(method, path, **kwargs)
        return response.json() if response.content else None

    def request_raw(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The successful answer as it is (e.g. a file); errors as ``ApiError``.

        A request that cannot even be built from the caller's input (a path or query with control
        characters or unencodable text, a body that is no JSON) is the caller's fault: 422
        ``INVALID_REQUEST``, not a 500 and not the service's unavailability."""
        try:
            response = self._http.request(method, path, **kwargs)
        except (httpx.InvalidURL, httpx.LocalProtocolError, ValueError) as exc:  # ValueError: UnicodeError, NaN in JSON
            raise ApiError(422, "INVALID_REQUEST", f"the request cannot be sent on: {type(exc).__name__}: {exc}"[:500],
                           {"method": method, "path": path.encode("ascii", "backslashreplace").decode()[:200]}) from exc
        except httpx.HTTPError as exc:
            raise ApiError(503, "SERVICE_UNAVAILABLE", f"{self._http.base_url} is unreachable: {exc}") from exc
        if response.is_success:
            return response
        try:
            error = response.json()["error"]
        except (ValueError, KeyError, TypeError):
            raise ApiError(response.status_code, "UPSTREAM_ERROR", response.text[:500]) from None
        raise ApiError(response.status_code, error["code"], error["message"], error.get("details") or {})


class DiskClient(ServiceClient):
    """disk-service: which disks a node has, the nodes' failure domains, and exclusive allocation of whole disks."""

    def disks(self, **filters: str) -> list[dict[str, Any]]:
        """Every disk matching ``filters`` (node, state, class, owner), all pages."""
        items, token = [], None
        while True:
            page = self.request("GET", "/disks", params={**filters, "page_size": 500,
                                                          **({"page_token": token} if token else {})})
            items.extend(page["items"])
            token = page.get("next_page_token")
            if not token:
                return items

    def disks_of_node(self, node: str) -> list[dict[str, Any]]:
        return self.disks(node=node)

    def failure_domains(self) -> dict[str, str]:
        """Node name → its failure domain (its rack, or the node itself when it has none), every node."""
        return {node["name"]: node["failure_domain"] for node in self.request("GET", "/nodes")}

    def allocate(self, node: str, disk_class: str, count: int, owner: str) -> list[dict[str, Any]]:
        body = {"node": node, "disk_class": disk_class, "count": count, "owner": owner}
        return self.request("POST", "/allocations", json=body)["disks"]

    def held_by(self, owner: str) -> list[dict[str, Any]]:
        """The disks ``owner`` holds now (none: an empty list)."""
        try:
            return self.request("GET", "/allocations", params={"owner": owner})["disks"]
        except ApiError as exc:
            if exc.code == "NOT_ALLOCATED":
                return []
            raise

    def release(self, owner: str) -> list[dict[str, Any]]:
        """Release (and wipe) everything ``owner`` holds."""
        return self.request("POST", "/allocations/release", json={"owner": owner})

    def allocate_batch(self, requests: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """Disks for many owners in ONE call, all or none (one transaction): ``requests`` are
        ``{"owner", "node", "disk_class", "count"}``, an owner once per class and on one node. Returns
        owner → its disks (id, node, device_path, mount_point, disk_class, size_bytes); asking again
        for what the owners already hold returns the same disks."""
        return self.request("POST", "/allocations/batch", json={"requests": requests})["allocations"]

    def transfer(self, moves: list[dict[str, str]]) -> dict[str, list[dict[str, Any]]]:
        """Hand every disk each ``from_owner`` holds to its ``to_owner`` (no wipe), all moves in one
        transaction; a move already done moves nothing. Returns to_owner → the disks it holds."""
        return self.request("POST", "/allocations/transfer", json={"moves": moves})["allocations"]

    def release_many(self, owners: list[str]) -> list[dict[str, Any]]:
        """Release (and wipe) everything these owners hold, in one call; an owner holding nothing is fine."""
        if not owners:
            return []
        return self.request("POST", "/allocations/release", json={"owners": list(owners)})


class NetworkClient(ServiceClient):
    """network-service: floating IPs for members."""

    def allocate(self, owner: str, pool: str, dns_service: str | None = None, dns_name: str | None = None,
                 health_tcp_port: int | None = None) -> dict[str, Any]:
        """The member's floating IP (the same one again if it already has one): address, Docker network,
        and its DNS name ``<dns_name>.<dns_service>.service.<domain>`` when asked for."""
        body = {"owner": owner, "pool": pool, "dns_service": dns_service, "dns_name": dns_name,
                "health_tcp_port": health_tcp_port}
        return self.request("POST", "/allocations", json={k: v for k, v in body.items() if v is not None})

    def release(self, owner: str) -> Any:
        return self.request("POST", "/allocations/release", json={"owner": owner})

    def allocate_batch(self, pool: str, members: list[dict[str, Any]], dns_service: str | None = None,
                       healthy: bool = False) -> list[dict[str, Any]]:
        """Floating IPs for many members in ONE call, all or none: ``members`` are ``{"owner",
        "dns_name"?, "health_tcp_port"?}``; with ``dns_service`` each named member is registered in
        Consul as ``<dns_name>.<dns_service>.service.<domain>``. Returns one lease per member, in
        order: owner, address, docker_network, dns_name (the full name, or None). A member that
        already holds an IP in the pool gets the same one back. ``healthy``: the members were just
        found healthy; their names resolve at once (Consul goes on checking)."""
        body: dict[str, Any] = {"pool": pool, "members": members, **({"healthy": True} if healthy else {})}
        if dns_service is not None:
            body["dns_service"] = dns_service
        return self.request("POST", "/allocations/batch", json=body)["leases"]

    def transfer(self, moves: list[dict[str, str]]) -> dict[str, list[dict[str, Any]]]:
        """Hand every disk each ``from_owner`` holds to its ``to_owner`` (no wipe), all moves in one
        transaction; a move already done moves nothing. Returns to_owner → the disks it holds."""
        return self.request("POST", "/allocations/transfer", json={"moves": moves})["allocations"]

    def release_many(self, owners: list[str]) -> list[dict[str, Any]]:
        """Free every IP of these owners and drop their DNS names, in one call; holding nothing is fine."""
        if not owners:
            return []
        return self.request("POST", "/allocations/release", json={"owners": list(owners)})

    def release_owner_prefix(self, prefix: str) -> list[dict[str, Any]]:
        """Free every IP (and DNS name) of every owner named ``prefix…`` (a cluster's members), in one call."""
        return self.request("POST", "/allocations/release", json={"owner_prefix": prefix})


class SchedulerClient(ServiceClient):
    """scheduler: members and job drivers as Mesos tasks."""

    def launch(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return self.request("POST", "/launches", json=body)

    def nodes(self) -> list[str]:
        """The platform's nodes now (the agents the master counts as active)."""
        return [node["name"] for node in self.request("GET", "/nodes")]

    def unfinished_clusters(self, origin: str) -> dict[str, int]:
        """Clusters ``origin`` launched that still have tasks not terminal: id → how many."""
        return self.request("GET", "/clusters", params={"origin": origin})

    def tasks(self, cluster_id: str) -> list[dict[str, Any]]:
        return self.request("GET", f"/clusters/{cluster_id}/tasks")

    def kill(self, cluster_id: str) -> list[dict[str, Any]]:
        return self.request("POST", f"/clusters/{cluster_id}/kill")

    def add_members(self, spec: dict[str, Any]) -> list[dict[str, Any]]:
        """Add members (a ``ClusterSpec`` of only them) to a cluster that has tasks; a repeat adds nothing."""
        return self.request("POST", f"/clusters/{spec['cluster_id']}/members", json=spec)

    def update_container(self, cluster_id: str, member_id: str, container: dict[str, Any]) -> dict[str, Any]:
        """The member's container as rendered now, for its later relaunches."""
        return self.request("PUT", f"/clusters/{cluster_id}/members/{member_id}/container", json=container)

    def kill_member(self, cluster_id: str, member_id: str) -> dict[str, Any]:
        """Kill one member's task (its disks released and wiped as it ends)."""
        return self.request("POST", f"/clusters/{cluster_id}/members/{member_id}/kill")

    def stop(self, cluster_id: str) -> list[dict[str, Any]]:
        """Kill the cluster's members keeping their disks (and its job drivers)."""
        return self.request("POST", f"/clusters/{cluster_id}/stop")

    def start(self, cluster_id: str) -> list[dict[str, Any]]:
        """Launch a stopped cluster's members again on their kept disks."""
        return self.request("POST", f"/clusters/{cluster_id}/start")

    def hand_over(self, cluster_id: str, owners: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
        """Give ended members' kept disks (member id → new owner) to their new owners, data and all."""
        return self.request("POST", f"/clusters/{cluster_id}/hand-over", json={"owners": owners})

    def relaunch(self, cluster_id: str, member_id: str, launches_seen: int, reason: str = "") -> dict[str, Any]:
        """Launch an ended member again with its lease (on fresh disks, or, ``restart: in_place``, pinned
        to the disks it kept on its node); a repeat changes nothing."""
        return self.request("POST", f"/clusters/{cluster_id}/members/{member_id}/relaunch",
                            json={"launches_seen": launches_seen, "reason": reason[:1000]})

    def launch_job(self, cluster_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Queue a job's driver as a Mesos task of the cluster (member id ``job-<job id>``); asking
        again with the same body changes nothing."""
        return self.request("POST", f"/clusters/{cluster_id}/jobs", json=body)

    def kill_job(self, cluster_id: str, job_id: str) -> dict[str, Any]:
        """Kill a job's driver task (one not launched yet just ends)."""
        return self.request("POST", f"/clusters/{cluster_id}/jobs/{job_id}/kill")
