"""The Docker network that carries a pool, and moving floating IPs between containers."""
import docker
from docker.errors import APIError, NotFound
from docker.types import IPAMConfig, IPAMPool

from spindle_common.contracts import OWNED_LABEL
from spindle_common.errors import ApiError

POOL_LABEL = "io.spindle.pool"


def ensure_network(client: docker.DockerClient, name: str, pool: str, cidr: str, gateway: str, auto_cidr: str,
                   driver: str, parent: str | None) -> None:
    """Create the pool's network, or adopt an identical one Spindle made before (idempotent)."""
    try:
        existing = client.networks.get(name)
    except NotFound:
        existing = None
    if existing is not None:
        labels = existing.attrs.get("Labels") or {}
        configs = existing.attrs["IPAM"]["Config"] or [{}]
        if labels.get(POOL_LABEL) == pool and configs[0].get("Subnet") == cidr:
            return
        raise ApiError(409, "DOCKER_NETWORK_EXISTS", f"Docker network {name} exists and is not this pool's",
                       {"docker_network": name})
    ipam = IPAMConfig(pool_configs=[IPAMPool(subnet=cidr, gateway=gateway, iprange=auto_cidr)])
    options = {"parent": parent} if driver == "macvlan" and parent else None
    try:
        client.networks.create(name, driver=driver, ipam=ipam, options=options,
                               labels={OWNED_LABEL: "true", POOL_LABEL: pool})
    except APIError as exc:
        raise ApiError(409, "DOCKER_NETWORK_FAILED", f"Docker refused network {name}: {exc.explanation}") from exc


def remove_network(client: docker.DockerClient, name: str) -> None:
    try:
        client.networks.get(name).remove()
    except NotFound:
        pass


def _container(client: docker.DockerClient, ref: str):
    try:
        return client.containers.get(ref)
    except NotFound:
        raise ApiError(404, "CONTAINER_NOT_FOUND", f"container {ref} does not exist", {"container": ref}) from None


def attach(client: docker.DockerClient, network: str, container: str, address: str) -> None:
    """Connect ``container`` to the pool network with ``address``."""
    try:
        client.networks.get(network).connect(_container(client, container), ipv4_address=address)
    except APIError as exc:
        raise ApiError(409, "ATTACH_FAILED", f"cannot give {address} to {container}: {exc.explanation}") from exc


def detach(client: docker.DockerClient, network: str, container: str) -> None:
    try:
        client.networks.get(network).disconnect(_container(client, container), force=True)
    except APIError as exc:
        if exc.status_code != 404:
            raise ApiError(409, "DETACH_FAILED", f"cannot detach {container}: {exc.explanation}") from exc
