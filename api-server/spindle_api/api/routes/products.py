"""The product catalog, launching a product (``POST /products/{product}/{version}``) and a
placement dry-run of a launch."""
import math
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Response

from spindle_api.api.deps import CatalogDep, CurrentUser, OrchestratorDep, SettingsDep
from spindle_api.api.links import cluster_links
from spindle_api.api.params import Product, Version, segment
from spindle_api.replicas import for_the_platform
from spindle_api.schemas import (
    ClusterView,
    Manifest,
    Plan,
    ProductCatalog,
    ProductImages,
    ProductSummary,
    upstream_model,
)
from spindle_api.upstream import actor_of, service_client
from spindle_common.catalog import member_requests, validate_options
from spindle_common.contracts import ClusterSpec
from spindle_common.errors import ApiError, error_responses
from spindle_common.images import product_state

router = APIRouter(prefix="/products", tags=["products"])

Options = Annotated[dict[str, Any] | None, Body(
    description="launch options, shaped by the product's options_schema "
                '(e.g. {"roles": {"worker": {"count": 3}}, "settings": {...}}); defaults fill the rest. Every '
                'product takes "placement": {"strategy": "spread"|"pack", "anti_affinity": [roles whose members '
                'must each be on a different node], "preferred_nodes": [...], "excluded_nodes": [...]}',
    examples=[{"roles": {"worker": {"count": 3}}},
              {"roles": {"worker": {"count": 3}},
               "placement": {"strategy": "spread", "anti_affinity": ["worker"], "excluded_nodes": ["node-2"]}}])]

OVER_QUOTA = ("the launch would pass a limit of your quota (QUOTA_EXCEEDED: details name the limit, the amount "
              "asked for, the usage and the quota)")
NOT_IN_CATALOG = "no such product or version in the catalog (PRODUCT_NOT_FOUND, VERSION_NOT_FOUND)"
BAD_OPTIONS = ("a parameter is not valid (VALIDATION_FAILED), or the options do not fit the product's "
               "options_schema (INVALID_OPTIONS, each problem by path), or a role kept apart "
               "(placement.replicas_apart) has more members than the platform has nodes to take them "
               "(REPLICAS_CANNOT_BE_APART: details name the role, the count and the nodes)")

def _finite(value: Any, path: str = "") -> None:
    """JSON allows NaN and Infinity nowhere; Python's parser lets them through (and NaN passes every bound)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ApiError(422, "INVALID_OPTIONS", "the options hold a number that is not finite",
                       {"errors": [{"path": path or "(top level)", "message": f"{value} is not a finite number"}]})
    if isinstance(value, dict):
        for key, item in value.items():
            _finite(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _finite(item, f"{path}.{index}" if path else str(index))


def _integers(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with every number its schema types ``integer`` as an int (JSON Schema accepts 2.0 as an integer)."""
    if isinstance(value, float) and schema.get("type") == "integer" and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        return {k: _integers(properties.get(k) or {}, v) for k, v in value.items()}
    return value


def resolved_options(manifest: dict[str, Any], options: dict[str, Any] | None) -> dict[str, Any]:
    """The options checked against the product's schema, its defaults filled in."""
    _finite(options or {})
    return _integers(manifest["options_schema"], validate_options(manifest, options or {}))


@router.get("", responses=error_responses(401))
def list_products(catalog: CatalogDep, settings: SettingsDep, _: CurrentUser) -> ProductCatalog:
    """Every product version that can be launched, and whether its images are built yet."""
    return ProductCatalog(products=[
        ProductSummary(name=m["name"], version=m["version"], description=m["description"], roles=list(m["roles"]),
                       path=f"/products/{m['name']}/{m['version']}",
                       images=ProductImages(**product_state(settings.state_dir, m)))
        for m in catalog.manifests()])


@router.get("/{product}/{version}", response_model_exclude_unset=True,
            responses=error_responses(401, 404, 422, descriptions={404: NOT_IN_CATALOG}))
def get_product(product: Product, version: Version, catalog: CatalogDep, _: CurrentUser) -> Manifest:
    """The product's manifest: roles, resources, ports, and its launch options' JSON Schema."""
    return Manifest.model_validate(catalog.get(product, version))


@router.post("/{product}/{version}", status_code=202,
             responses={202: {"headers": {"Location": {"description": "the new cluster's address",
                                                       "schema": {"type": "string"}}},
                              "description": "accepted: the cluster (PENDING), to follow at Location",
                              "links": cluster_links()},
                        **error_responses(400, 401, 403, 404, 409, 413, 422, 502, 503, descriptions={
                            403: OVER_QUOTA, 422: BAD_OPTIONS + "; a cluster named in `bind` is not of the "
                                                               "product the binding takes",
                            404: NOT_IN_CATALOG + ", or no cluster of yours has the id named in `bind` "
                                                  "(BOUND_CLUSTER_NOT_FOUND)",
                            409: "this Idempotency-Key was used for a different launch (IDEMPOTENCY_KEY_REUSED), "
                                 "or a cluster named in `bind` is not running (BOUND_CLUSTER_NOT_RUNNING)"})})
def launch_product(product: Product, version: Version, catalog: CatalogDep, user: CurrentUser,
                   orchestrator: OrchestratorDep, response: Response, options: Options = None,
                   idempotency_key: Annotated[str | None, Header(min_length=1, max_length=128,
                                                                 pattern=r"^[\x21-\x7e]+$")] = None) -> ClusterView:
    """Launch a cluster of the product. Accepted asynchronously: follow its state and events at
    ``Location``. Repeating a request with the same ``Idempotency-Key`` returns the same cluster.
    A product with bindings (its manifest's ``bindings``, e.g. Spark's ``hdfs``) takes
    ``"bind": {"hdfs": "<id of one of your running hadoop clusters>"}``. Options left out take the
    product's defaults, except in a role's ``disks``: once given, they name every disk the role gets
    (``{"ssd": 1}`` is one ssd disk; a class left out is 0)."""
    resolved = resolved_options(catalog.get(product, version), options)
    cluster = upstream_model(ClusterView, orchestrator.request("POST", "/clusters", json={
        "owner": user.username, "owner_id": actor_of(user), "product": product, "version": version, "options": resolved,
        "idempotency_key": idempotency_key}))
    response.headers["Location"] = "/clusters/" + "/".join(
        segment(s) for s in (cluster.owner, cluster.product, cluster.version, cluster.id))
    return cluster


@router.post("/{product}/{version}/plan",
             responses=error_responses(400, 401, 403, 404, 413, 422, 502, 503, descriptions={
                 403: OVER_QUOTA, 404: NOT_IN_CATALOG, 422: BAD_OPTIONS,
                 503: "the orchestrator or the scheduler is unreachable"}))
def plan_launch(product: Product, version: Version, catalog: CatalogDep, user: CurrentUser, settings: SettingsDep,
                options: Options = None) -> Plan:
    """Dry-run a launch: where each member would be placed on the resources offered now (as its
    ``placement`` option says), or — ``placeable`` false — for each member that fits nowhere, why
    each node refused it (``constraint``: excluded, cpus, mem, disks, cpuset, anti_affinity). Nothing
    is created or held. A launch over your quota is 403 QUOTA_EXCEEDED here too, and one with more
    replicas than nodes to keep them apart 422 REPLICAS_CANNOT_BE_APART."""
    manifest = catalog.get(product, version)
    resolved = resolved_options(manifest, options)
    resolved = for_the_platform(settings, user, manifest, resolved)
    with service_client(settings, "orchestrator", user) as orchestrator:
        orchestrator.request("POST", f"/quotas/{segment(actor_of(user))}/check",
                             json={"product": product, "version": version, "options": resolved})
    members = [{"member_id": f"{m['role']}-{m['index']}", "role": m["role"], "cpus": m["cpus"],
                "mem_mb": m["mem_mb"], "disks": m["disks"], "container": {"image": manifest["image"]}}
               for m in member_requests(manifest, resolved)]
    with service_client(settings, "scheduler", user) as scheduler:
        return upstream_model(Plan, scheduler.request("POST", "/placements/dry-run", json={
            "cluster_id": f"plan-{user.username}", **ClusterSpec.placement_fields(resolved),
            "members": members}), "scheduler")
