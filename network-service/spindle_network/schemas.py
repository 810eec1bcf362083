"""Bodies of network-service's API."""
from ipaddress import IPv4Address
from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from spindle_common.contracts import IpLease, Timestamp

NAME = r"^[a-z0-9][a-z0-9-]{0,62}$"
Owner = Annotated[str, Field(min_length=1, max_length=255)]


class PoolCreate(BaseModel):
    name: str = Field(pattern=NAME)
    cidr: str
    gateway: str | None = None
    floating_cidr: str | None = Field(default=None, description="default: upper half of cidr")
    auto_cidr: str | None = Field(default=None, description="Docker's automatic range; default: lower half")
    driver: Literal["bridge", "macvlan"] = "bridge"
    parent: str | None = Field(default=None, description="macvlan parent interface (e.g. a veth)")


class PoolOut(BaseModel):
    name: str
    cidr: str
    gateway: str
    floating_cidr: str
    auto_cidr: str
    driver: str
    parent: str | None
    docker_network: str
    floating_total: int
    floating_used: int


class AllocationRequest(BaseModel):
    owner: str = Field(min_length=1, max_length=255)
    pool: str = Field(pattern=NAME)
    # DNS: register ``<dns_name>.<dns_service>.service.<domain>`` in Consul for this IP.
    dns_service: str | None = Field(default=None, pattern=NAME)
    dns_name: str | None = Field(default=None, pattern=NAME)
    health_tcp_port: int | None = Field(default=None, ge=1, le=65535)


class ReleaseRequest(BaseModel):
    """Free every IP of ``owner``, or of each of ``owners`` in one call (one transaction; an owner
    holding nothing is skipped), or of every owner whose name starts with ``owner_prefix`` (a
    cluster's members, ``<cluster id>-``, whether or not the caller recorded them). Give exactly one."""

    owner: str | None = Field(default=None, min_length=1, max_length=255)
    owners: list[Owner] | None = Field(default=None, min_length=1, max_length=4096)
    # At least 8 characters: a prefix names one cluster's members, never "everything".
    owner_prefix: str | None = Field(default=None, min_length=8, max_length=128)

    @model_validator(mode="after")
    def _exactly_one(self) -> "ReleaseRequest":
        if sum(x is not None for x in (self.owner, self.owners, self.owner_prefix)) != 1:
            raise ValueError("give exactly one of owner, owners or owner_prefix")
        return self


class HeldIpOut(BaseModel):
    """A floating IP held by an owner, and since when (what a sweep compares with its holders)."""

    address: IPv4Address
    pool: str
    owner: str
    dns: str | None
    allocated_at: Timestamp | None


class BatchMember(BaseModel):
    """One member: its IP, and with the batch's ``dns_service`` and a ``dns_name`` its DNS name
    ``<dns_name>.<dns_service>.service.<domain>`` (Consul-checked on ``health_tcp_port`` if given)."""

    owner: Owner
    dns_name: str | None = Field(default=None, pattern=NAME)
    health_tcp_port: int | None = Field(default=None, ge=1, le=65535)


class BatchAllocationRequest(BaseModel):
    """Every member of one cluster at once (each owner once)."""

    pool: str = Field(pattern=NAME)
    dns_service: str | None = Field(default=None, pattern=NAME, description="e.g. the cluster id")
    members: list[BatchMember] = Field(min_length=1, max_length=1000)
    healthy: bool = Field(default=False, description=(
        "the members' health checks have just passed (their executors checked them): register their "
        "names with the Consul check passing at once instead of waiting for its first run"))

    @model_validator(mode="after")
    def _owners_once(self) -> "BatchAllocationRequest":
        seen: set[str] = set()
        for i, member in enumerate(self.members):
            if member.owner in seen:
                raise ValueError(f"members[{i}]: {member.owner} appears twice")
            seen.add(member.owner)
        return self


class MemberLease(IpLease):
    """A member's floating IP: ``dns_name`` is its full DNS name (None without one)."""

    owner: str


class BatchAllocationOut(BaseModel):
    """One lease per member, in the order asked."""

    leases: list[MemberLease]


class IpOut(BaseModel):
    address: IPv4Address
    pool: str
    docker_network: str
    owner: str | None
    container: str | None
    dns: str | None


class ContainerRef(BaseModel):
    container: str = Field(min_length=1, max_length=128)
