"""The product catalog, launching a product (``POST /products/{product}/{version}``) and a
placement dry-run of a launch."""
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Response

from spindle_api.api.deps import CatalogDep, CurrentUser, OrchestratorDep, SettingsDep
from spindle_api.schemas import Cluster, ProductCatalog, ProductSummary
from spindle_api.upstream import service_client
from spindle_client.client import cluster_path
from spindle_common.catalog import member_requests, validate_options

router = APIRouter(prefix="/products", tags=["products"])

Options = Annotated[dict[str, Any] | None, Body(
    description="launch options, shaped by the product's options_schema "
                '(e.g. {"roles": {"worker": {"count": 3}}, "settings": {...}}); defaults fill the rest',
    examples=[{"roles": {"worker": {"count": 3}}}])]


@router.get("")
def list_products(catalog: CatalogDep, _: CurrentUser) -> ProductCatalog:
    """Every product version that can be launched."""
    return ProductCatalog(products=[
        ProductSummary(name=m["name"], version=m["version"], description=m["description"], roles=list(m["roles"]),
                       path=f"/products/{m['name']}/{m['version']}")
        for m in catalog.manifests()])


@router.get("/{product}/{version}")
def get_product(product: str, version: str, catalog: CatalogDep, _: CurrentUser) -> dict[str, Any]:
    """The product's manifest: roles, resources, ports, and its launch options' JSON Schema."""
    return catalog.get(product, version)


@router.post("/{product}/{version}", status_code=202, response_model=Cluster,
             responses={202: {"headers": {"Location": {"description": "the new cluster's address"}}}})
def launch_product(product: str, version: str, catalog: CatalogDep, user: CurrentUser,
                   orchestrator: OrchestratorDep, response: Response, options: Options = None,
                   idempotency_key: Annotated[str | None, Header(max_length=128)] = None) -> dict[str, Any]:
    """Launch a cluster of the product. Accepted asynchronously: follow its state and events at
    ``Location``. Repeating a request with the same ``Idempotency-Key`` returns the same cluster."""
    resolved = validate_options(catalog.get(product, version), options or {})
    cluster = orchestrator.request("POST", "/clusters", json={
        "owner": user.username, "product": product, "version": version, "options": resolved,
        "idempotency_key": idempotency_key})
    response.headers["Location"] = cluster_path(cluster)
    return cluster


@router.post("/{product}/{version}/plan")
def plan_launch(product: str, version: str, catalog: CatalogDep, user: CurrentUser, settings: SettingsDep,
                options: Options = None) -> dict[str, Any]:
    """Dry-run a launch: where each member would be placed on the resources offered now, or which
    resource is short where. Nothing is created or held."""
    manifest = catalog.get(product, version)
    resolved = validate_options(manifest, options or {})
    members = [{"member_id": f"{m['role']}-{m['index']}", "role": m["role"], "cpus": m["cpus"],
                "mem_mb": m["mem_mb"], "disks": m["disks"], "container": {"image": manifest["image"]}}
               for m in member_requests(manifest, resolved)]
    with service_client(settings, "scheduler", user) as scheduler:
        return scheduler.request("POST", "/placements/dry-run", json={
            "cluster_id": f"plan-{user.username}", "strategy": resolved.get("strategy", "spread"),
            "members": members})
