"""Bodies of the public API that are not users: products and clusters (as the orchestrator keeps them)."""
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ProductSummary(BaseModel):
    name: str
    version: str
    description: str
    roles: list[str]
    path: str = Field(description="where to GET the manifest and POST a launch")


class ProductCatalog(BaseModel):
    products: list[ProductSummary]


class Member(BaseModel):
    model_config = ConfigDict(extra="allow")
    member_id: str
    role: str
    state: str
    node: str | None = None
    ip: str | None = None
    dns_name: str | None = None
    disks: list[dict[str, Any]] = []
    ports: list[dict[str, Any]] = []
    replacements: int = Field(0, description="how often Spindle launched this member again after it died")


class Cluster(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    owner: str
    product: str
    version: str
    state: str = Field(description="PENDING|QUEUED|SCHEDULING|DEPLOYING|CONFIGURING|RUNNING|FAILED|DESTROYING|DESTROYED")
    reason_code: str | None = None
    reason: str | None = None
    options: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    members: list[Member] = []


class ClusterPage(BaseModel):
    items: list[Cluster]
    next_page_token: str | None = None


class ClusterEvent(BaseModel):
    seq: int
    at: datetime
    member_id: str | None = None
    step: str
    state: str
    message: str
