"""Bodies of network-service's API."""
from ipaddress import IPv4Address
from typing import Literal

from pydantic import BaseModel, Field

NAME = r"^[a-z0-9][a-z0-9-]{0,62}$"


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
    owner: str = Field(min_length=1, max_length=255)


class IpOut(BaseModel):
    address: IPv4Address
    pool: str
    docker_network: str
    owner: str | None
    container: str | None
    dns: str | None


class ContainerRef(BaseModel):
    container: str = Field(min_length=1, max_length=128)
