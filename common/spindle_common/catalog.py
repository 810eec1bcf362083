"""The product catalog: ``catalog/<product>/<version>/manifest.json``, loaded and checked once.

A manifest describes a product's roles (resources, ports, health check, templated command, env
and files) and the JSON Schema (Draft 2020-12) of its launch options. A broken manifest fails at
load, naming its file and field; bad launch options are an ``INVALID_OPTIONS`` error listing each
problem by path.

Every product takes the same ``placement`` option (strategy, anti-affinity, replicas apart,
preferred and excluded nodes). Its schema is written once, here: a manifest's options schema says
``"placement": {"$ref": "spindle:placement"}`` and the loader puts ``placement_schema`` in its place,
``anti_affinity`` and ``replicas_apart`` limited to that product's roles, ``replicas_apart``
defaulting to the roles marked ``"replicas": true`` (keywords beside the ``$ref``, e.g. a product's
own ``default``, win). Everyone who reads the manifest afterwards (the validator, the API, the web form)
sees a plain schema.

A product that can use another cluster of its owner declares it in ``bindings`` (name → the product
it takes, e.g. ``{"hdfs": {"product": "hadoop"}}``); the loader adds the ``bind`` option (name → a
cluster id) to its options schema. The orchestrator checks the named clusters (``bindings.py``).
"""
import copy
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from spindle_common.contracts import (
    ALLOWED_CAPABILITIES,
    DATASET_NAME_PATTERN,
    DISK_CLASSES,
    MAX_PIDS_LIMIT,
    STRATEGIES,
    USER_PATTERN,
)
from spindle_common.errors import ApiError

_STRINGS = {"type": "array", "items": {"type": "string"}}
ROLE_PATTERN = "^[a-z][a-z0-9-]{0,63}$"  # a role's name in a manifest
SELF_DRAIN = "self"  # a drain's ``by`` when each leaving member drains itself (its ``start``, then ``done``)
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
# A role's (or the jobs') container hardening (``contracts.SecuritySpec``): what it may keep.
_SECURITY = {
    "type": "object", "additionalProperties": False,
    "description": "the container runs as this user, keeps only these capabilities, may have a read-only root",
    "properties": {
        "user": {"type": "string", "pattern": USER_PATTERN},
        "cap_add": {"type": "array", "uniqueItems": True, "items": {"enum": list(ALLOWED_CAPABILITIES)}},
        "read_only_root": {"type": "boolean"},
        "pids_limit": {"type": "integer", "minimum": 16, "maximum": MAX_PIDS_LIMIT},
    },
}

# The shape every manifest must have (the options schema itself is checked against the meta-schema).
MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "version", "description", "image", "roles", "options_schema"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
        "version": {"type": "string", "pattern": "^[0-9A-Za-z][0-9A-Za-z.-]*$"},
        "description": {"type": "string", "minLength": 1},
        "image": {"type": "string", "minLength": 1},
        "options_schema": {"type": "object"},
        "templates": {**_STRING_MAP, "description": "templates shared by the product's other templates, which "
                                                    "see each rendered as shared[name] (a configuration file many "
                                                    "roles and the jobs have in common)"},
        "bindings": {
            "type": "object", "propertyNames": {"pattern": "^[a-z][a-z0-9-]*$"},
            "description": "other clusters of the owner this product can use: name → the product it takes",
            "additionalProperties": {
                "type": "object", "additionalProperties": False, "required": ["product", "description"],
                "properties": {"product": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
                               "description": {"type": "string", "minLength": 1}},
            },
        },
        "kerberos": {
            "type": "object", "additionalProperties": False, "required": ["principals"],
            "description": "the Kerberos principals (names without the realm, templated; each instance the "
                           "cluster's id or ending in .<its id>) whose keys in the platform's KDC its members "
                           "(principals) and job drivers (job_principals) get as SPINDLE_KEYTAB, while `when` "
                           "renders True",
            "properties": {"when": {"type": "string"}, "principals": _STRINGS, "job_principals": _STRINGS},
        },
        "jobs": {
            "type": "object", "additionalProperties": False, "required": ["image", "command"],
            "description": "how a job's driver runs: image and templated command (the job's args follow it)",
            "properties": {"image": {"type": "string", "minLength": 1}, "command": _STRINGS, "env": _STRING_MAP,
                           "cpus": {"type": "number", "exclusiveMinimum": 0},
                           "mem_mb": {"type": "integer", "minimum": 64}, "security": _SECURITY},
        },
        "roles": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": ROLE_PATTERN},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["count", "cpus", "mem_mb"],
                "properties": {
                    "count": {
                        "type": "object", "additionalProperties": False, "required": ["default", "min", "max"],
                        "properties": {
                            **{k: {"type": "integer", "minimum": 0} for k in ("default", "min", "max")},
                            "when": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0},
                                     "description": "boolean setting → the count while it is on (HDFS's ha: two "
                                                    "NameNodes); a role whose count this decides takes no count "
                                                    "option"},
                        },
                    },
                    "cpus": {"type": "number", "exclusiveMinimum": 0},
                    "mem_mb": {"type": "integer", "minimum": 16},
                    "disks": {
                        "type": "object", "additionalProperties": False,
                        "properties": {c: {"type": "integer", "minimum": 0} for c in DISK_CLASSES},
                    },
                    "ports": {"type": "array", "items": {
                        "type": "object", "additionalProperties": False, "required": ["name", "port"],
                        "properties": {"name": {"type": "string"},
                                       "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                                       "protocol": {"enum": ["tcp", "udp"]}, "ui": {"type": "boolean"}},
                    }},
                    "health": {
                        "type": "object", "additionalProperties": False,
                        "properties": {"command": _STRINGS,
                                       "tcp_port": {"type": "integer", "minimum": 1, "maximum": 65535},
                                       "timeout_seconds": {"type": "number", "exclusiveMinimum": 0}},
                        "oneOf": [{"required": ["command"]}, {"required": ["tcp_port"]}],
                    },
                    "command": _STRINGS,
                    "restart": {"enum": ["never", "replace", "in_place"],
                                "description": "replace: a member that dies while running is launched again on fresh "
                                               "disks with the same floating IP; in_place: on its node with its "
                                               "disks, data and all (replaced on fresh disks only when its node "
                                               "is lost)"},
                    "env": _STRING_MAP,
                    "files": _STRING_MAP,
                    "reload": {**_STRINGS, "description": "run in a running member after a resize put its "
                                                           "re-rendered files in (its new peers): an argv"},
                    "drain": {
                        "type": "object", "additionalProperties": False, "required": ["by", "done"],
                        "description": "how a member of this role is drained before a resize removes it: the "
                                       "first member of role `by` gets its files rendered with `leaving` (the "
                                       "members going) and runs its `reload`; the member goes once `done` (an "
                                       "argv run in that member, templated with `leaving`) exits 0, or after "
                                       "`timeout_s`. `by: self`: each leaving member runs `start` itself (a "
                                       "non-zero exit refuses its removal) and then `done` (exit 3: the drain "
                                       "failed, the member stays)",
                        "properties": {"by": {"type": "string", "pattern": ROLE_PATTERN}, "done": _STRINGS,
                                       "start": _STRINGS,
                                       "timeout_s": {"type": "integer", "minimum": 10, "maximum": 86400}},
                    },
                    "security": _SECURITY,
                    "replicas": {"type": "boolean",
                                 "description": "its members hold copies of each other's data (DataNodes, brokers, "
                                                "Cassandra nodes): placed one per node, over racks first, unless "
                                                "the launch's placement.replicas_apart leaves the role out"},
                },
            },
        },
    },
}
_MANIFEST_VALIDATOR = Draft202012Validator(MANIFEST_SCHEMA)

PLACEMENT_REF = "spindle:placement"
# A node's name as placement knows it (the Mesos agent's hostname).
_NODE_NAMES = {"type": "array", "uniqueItems": True, "maxItems": 256, "default": [],
               "items": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"}}


def placement_schema(roles: list[str], replicas: list[str] | None = None) -> dict[str, Any]:
    """The ``placement`` launch option of a product with these roles, ``replicas`` the ones that hold
    copies of each other's data (the fragment every manifest refers to)."""
    return {
        "type": "object", "additionalProperties": False,
        "description": "where the members may go",
        "properties": {
            "strategy": {"enum": list(STRATEGIES), "default": "spread",
                         "description": "spread: the cluster's members on different nodes where they fit; "
                                        "pack: fill up busy nodes first"},
            "anti_affinity": {"title": "Anti-affinity", "type": "array", "uniqueItems": True, "default": [],
                              "items": {"enum": list(roles)},
                              "description": "roles whose members must each be on a different node (a hard rule: "
                                             "not placeable on fewer nodes than members of such a role)"},
            "replicas_apart": {"title": "Replicas apart", "type": "array", "uniqueItems": True,
                               "default": list(replicas or []), "items": {"enum": list(roles)},
                               "description": "roles whose members hold copies of each other's data: one per node "
                                              "and spread over racks on a platform of several nodes (a launch "
                                              "with more of them than nodes is refused); on a one-node platform "
                                              "they share it, and the cluster says so. Default: the product's "
                                              "replica roles; [] lets them share nodes"},
            "preferred_nodes": {**_NODE_NAMES, "description": "nodes tried first (when they fit)"},
            "excluded_nodes": {**_NODE_NAMES, "description": "nodes never used"},
        },
    }


def _resolve_placement(manifest: dict[str, Any]) -> None:
    """Put the shared placement schema where the options schema refers to it (see the module's doc)."""
    properties = manifest["options_schema"].get("properties")
    sub = properties.get("placement") if isinstance(properties, dict) else None
    if not (isinstance(sub, dict) and sub.get("$ref") == PLACEMENT_REF):
        raise CatalogError(f'needs "placement": {{"$ref": "{PLACEMENT_REF}"}}: every product takes the shared '
                           "placement option")
    replicas = [name for name, role in manifest["roles"].items() if role.get("replicas")]
    properties["placement"] = {**placement_schema(list(manifest["roles"]), replicas),
                               **{k: v for k, v in sub.items() if k != "$ref"}}


CLUSTER_ID_PATTERN = "^c[0-9a-f]{10}$"


def bind_schema(bindings: dict[str, Any]) -> dict[str, Any]:
    """The ``bind`` launch option of a product with these ``bindings``."""
    return {
        "type": "object", "additionalProperties": False,
        "description": "other clusters of yours this cluster uses, by binding name (a cluster id each)",
        "properties": {name: {"type": "string", "pattern": CLUSTER_ID_PATTERN,
                              "description": f"{b['description']} (the id of one of your running {b['product']} "
                                             "clusters)"}
                       for name, b in sorted(bindings.items())},
    }


def _add_bind(manifest: dict[str, Any]) -> None:
    """Put the ``bind`` option into the options schema of a product that declares ``bindings``."""
    if "bindings" not in manifest:
        return
    properties = manifest["options_schema"].setdefault("properties", {})
    if "bind" in properties:
        raise CatalogError('field options_schema.properties.bind: comes from "bindings"; do not write it')
    properties["bind"] = bind_schema(manifest["bindings"])


def _add_dataset(manifest: dict[str, Any]) -> None:
    """Every product takes the ``dataset`` option: a dataset of the owner (disks a deleted cluster of
    this product kept) whose disks its members of the same role and index take over."""
    properties = manifest["options_schema"].setdefault("properties", {})
    if "dataset" in properties:
        raise CatalogError("field options_schema.properties.dataset: every product has it; do not write it")
    properties["dataset"] = {
        "type": "string", "pattern": DATASET_NAME_PATTERN,
        "description": "a dataset of yours (the disks a deleted cluster of this product kept) whose disks this "
                       "cluster's members of the same role and index take over, data and all"}


class CatalogError(ValueError):
    """A manifest in the catalog is broken; the message names the file and the field."""


def _dotted(path: Any) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


@dataclass
class Catalog:
    """Every product version in the catalog, by product name then version."""

    root: Path
    products: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def manifests(self) -> list[dict[str, Any]]:
        """All manifests, sorted by product and version."""
        return [self.products[p][v] for p in sorted(self.products) for v in sorted(self.products[p])]

    def get(self, product: str, version: str) -> dict[str, Any]:
        """The manifest of ``product`` ``version``; a 404 naming what the catalog has otherwise."""
        versions = self.products.get(product)
        if versions is None:
            raise ApiError(404, "PRODUCT_NOT_FOUND", f"no product {product!r} in the catalog",
                           {"product": product, "products": sorted(self.products)})
        if version not in versions:
            raise ApiError(404, "VERSION_NOT_FOUND", f"product {product!r} has no version {version!r}",
                           {"product": product, "version": version, "versions": sorted(versions)})
        return versions[version]


def load_manifest(path: Path) -> dict[str, Any]:
    """Read and check one manifest; ``CatalogError`` names the file and the first bad field."""
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CatalogError(f"{path}: not readable JSON: {exc}") from exc
    errors = sorted(_MANIFEST_VALIDATOR.iter_errors(manifest), key=lambda e: list(e.absolute_path))
    if errors:
        raise CatalogError(f"{path}: field {_dotted(errors[0].absolute_path)}: {errors[0].message}")
    product, version = path.parent.parent.name, path.parent.name
    if (manifest["name"], manifest["version"]) != (product, version):
        raise CatalogError(f"{path}: field name/version: {manifest['name']} {manifest['version']} "
                           f"does not match its folder {product}/{version}")
    for role, spec in manifest["roles"].items():
        count = spec["count"]
        if not all(count["min"] <= n <= count["max"] for n in (count["default"], *count.get("when", {}).values())):
            raise CatalogError(f"{path}: field roles.{role}.count: needs min <= default (and each when) <= max")
        drain = spec.get("drain")
        if drain and drain["by"] == SELF_DRAIN and "start" not in drain:
            raise CatalogError(f"{path}: field roles.{role}.drain.start: a drain by the member itself needs it")
        if drain and drain["by"] != SELF_DRAIN and drain["by"] not in manifest["roles"]:
            raise CatalogError(f"{path}: field roles.{role}.drain.by: no role {drain['by']!r}")
        if drain and drain["by"] != SELF_DRAIN and "start" in drain:
            raise CatalogError(f"{path}: field roles.{role}.drain.start: only a drain by the member itself "
                               "(by: self) has one")
    try:
        _resolve_placement(manifest)
    except CatalogError as exc:
        raise CatalogError(f"{path}: field options_schema.properties.placement: {exc}") from None
    try:
        _add_bind(manifest)
        _add_dataset(manifest)
    except CatalogError as exc:
        raise CatalogError(f"{path}: {exc}") from None
    try:
        Draft202012Validator.check_schema(manifest["options_schema"])
    except SchemaError as exc:
        raise CatalogError(f"{path}: field options_schema.{_dotted(exc.absolute_path)}: {exc.message}") from exc
    problems = _default_problems(manifest)
    if problems:
        raise CatalogError(f"{path}: field options_schema: its defaults are not valid options: {problems}")
    return manifest


def _default_problems(manifest: dict[str, Any]) -> list[dict[str, str]]:
    """What is wrong with the options schema's defaults alone. An option every launch must give
    (``required`` without a default, e.g. jupyterlab's ``settings.token``) is not a fault of the defaults."""
    defaults: dict[str, Any] = {}
    _apply_defaults(manifest["options_schema"], defaults)
    errors = Draft202012Validator(manifest["options_schema"]).iter_errors(defaults)
    return [{"path": _dotted(e.absolute_path), "message": e.message}
            for e in sorted(errors, key=lambda e: list(e.absolute_path)) if e.validator != "required"]


def load_catalog(root: Path | str) -> Catalog:
    """Load and check every ``<root>/<product>/<version>/manifest.json``."""
    catalog = Catalog(Path(root))
    for path in sorted(Path(root).glob("*/*/manifest.json")):
        manifest = load_manifest(path)
        catalog.products.setdefault(manifest["name"], {})[manifest["version"]] = manifest
    return catalog


def _apply_defaults(schema: dict[str, Any], instance: dict[str, Any]) -> None:
    """Fill in the schema's ``default``s, descending into object properties (absent objects are
    created only when something inside them has a default)."""
    for name, sub in schema.get("properties", {}).items():
        if not isinstance(sub, dict):
            continue
        if name not in instance and "default" in sub:
            instance[name] = copy.deepcopy(sub["default"])
        if "properties" in sub:
            child = instance.get(name, {})
            if isinstance(child, dict):
                _apply_defaults(sub, child)
                if child or name in instance:
                    instance[name] = child


def _complete_disks(schema: dict[str, Any], options: dict[str, Any]) -> None:
    """A role's ``disks``, once given, are all the disks it asks for: a class it does not name is 0,
    not the schema's default (``{"ssd": 1}`` is one ssd, not one ssd beside the default hdd)."""
    roles, role_schemas = options.get("roles"), schema.get("properties", {}).get("roles", {}).get("properties", {})
    if not isinstance(roles, dict):
        return
    for role, chosen in roles.items():
        disks = chosen.get("disks") if isinstance(chosen, dict) else None
        classes = role_schemas.get(role, {}).get("properties", {}).get("disks", {}).get("properties", {})
        if isinstance(disks, dict):
            for disk_class in classes:
                disks.setdefault(disk_class, 0)


def validate_options(manifest: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The launch options with the schema's defaults applied; 422 ``INVALID_OPTIONS`` listing every
    problem (path and message) when they do not fit the product's options schema."""
    resolved = copy.deepcopy(options)
    if isinstance(resolved, dict):
        _complete_disks(manifest["options_schema"], resolved)
        _apply_defaults(manifest["options_schema"], resolved)
    validator = Draft202012Validator(manifest["options_schema"])
    errors = [{"path": _dotted(e.absolute_path), "message": e.message}
              for e in sorted(validator.iter_errors(resolved), key=lambda e: list(e.absolute_path))]
    if not errors:
        errors = _placement_problems(resolved.get("placement") or {})
    if errors:
        raise ApiError(422, "INVALID_OPTIONS", f"the options do not fit {manifest['name']} {manifest['version']}",
                       {"errors": errors})
    return resolved


def _placement_problems(placement: dict[str, Any]) -> list[dict[str, str]]:
    """What the placement schema cannot say: a node is not both preferred and excluded."""
    both = sorted(set(placement.get("preferred_nodes", [])) & set(placement.get("excluded_nodes", [])))
    return [{"path": "placement.excluded_nodes", "message": f"{node!r} is also in preferred_nodes"} for node in both]


# A setting whose default the platform decides: on when the platform has at least this many nodes.
DEFAULT_FROM_NODES = "x-spindle-on-from-nodes"


def _settings_schema(manifest: dict[str, Any]) -> dict[str, Any]:
    """The schemas of the product's ``settings`` options by name."""
    return manifest["options_schema"].get("properties", {}).get("settings", {}).get("properties", {})


def platform_defaults(manifest: dict[str, Any], options: dict[str, Any], nodes: Collection[str]) -> dict[str, Any]:
    """``options`` (resolved) with each setting the launch left out whose default depends on the
    platform (``x-spindle-on-from-nodes: N`` in its schema, e.g. HDFS's ``ha``) decided for these
    ``nodes``: on when there are at least N. A new dict; settings given stay as they are."""
    schema = _settings_schema(manifest)
    settings = dict(options.get("settings") or {})
    for name, sub in schema.items():
        if isinstance(sub, dict) and DEFAULT_FROM_NODES in sub and name not in settings:
            settings[name] = len(nodes) >= sub[DEFAULT_FROM_NODES]
    return {**options, "settings": settings} if settings or "settings" in options else dict(options)


# What a cluster says while a setting is off (a notice: {"code", "message"}), e.g. HDFS without a standby.
NOTICE_WHEN_OFF = "x-spindle-notice-when-off"


def setting_notices(manifest: dict[str, Any], options: dict[str, Any]) -> dict[str, str]:
    """The notices (code → message) of the settings that are off in ``options`` and whose schema gives
    one for that (``x-spindle-notice-when-off``)."""
    schema = _settings_schema(manifest)
    settings = options.get("settings") or {}
    return {sub[NOTICE_WHEN_OFF]["code"]: sub[NOTICE_WHEN_OFF]["message"] for name, sub in schema.items()
            if isinstance(sub, dict) and NOTICE_WHEN_OFF in sub and settings.get(name) is False}


def _role_count(spec: dict[str, Any], chosen: dict[str, Any], settings: dict[str, Any]) -> int:
    """How many members of a role: the launch's count, or the one a setting that is on decides
    (``count.when``), or the manifest's default."""
    if "count" in chosen:
        return chosen["count"]
    for setting, count in spec["count"].get("when", {}).items():
        if settings.get(setting):
            return count
    return spec["count"]["default"]


def member_requests(manifest: dict[str, Any], options: dict[str, Any]) -> list[dict[str, Any]]:
    """Each member's role and resources (count, cpus, mem_mb, disks by class) from resolved options,
    falling back to the manifest's role defaults."""
    members = []
    settings = options.get("settings") or {}
    for role, spec in manifest["roles"].items():
        chosen = options.get("roles", {}).get(role, {})
        disks = {k: v for k, v in {**spec.get("disks", {}), **chosen.get("disks", {})}.items() if v}
        for index in range(1, _role_count(spec, chosen, settings) + 1):
            members.append({"role": role, "index": index, "cpus": float(chosen.get("cpus", spec["cpus"])),
                            "mem_mb": int(chosen.get("mem_mb", spec["mem_mb"])), "disks": disks})
    return members


def role_counts(manifest: dict[str, Any], options: dict[str, Any]) -> dict[str, int]:
    """How many members of each role the options ask for (the manifest's defaults filling in)."""
    counts: dict[str, int] = {role: 0 for role in manifest["roles"]}
    for member in member_requests(manifest, options):
        counts[member["role"]] += 1
    return counts


def replicas_sharing(manifest: dict[str, Any], options: dict[str, Any], nodes: Collection[str]) -> list[str]:
    """Keeping replicas apart (``placement.replicas_apart``) on a platform of these ``nodes`` (the
    scheduler's active agents; none known: nothing is checked). Several nodes: a role with more members than the
    nodes its launch may use is refused (422 REPLICAS_CANNOT_BE_APART, naming the role, the count and
    the nodes). One node: the roles whose members will share it (for the cluster to say so)."""
    placement = options.get("placement") or {}
    counts = role_counts(manifest, options)
    roles = [role for role in placement.get("replicas_apart", []) if counts.get(role, 0) > 1]
    if len(nodes) <= 1:
        return roles if nodes else []
    excluded = set(placement.get("excluded_nodes", []))
    usable = sorted(n for n in nodes if n not in excluded)
    for role in roles:
        if counts[role] > len(usable):
            raise ApiError(422, "REPLICAS_CANNOT_BE_APART",
                           f"role {role}: {counts[role]} members hold copies of each other's data and must each be "
                           f"on a different node, but {len(usable)} nodes may take them "
                           f"({', '.join(usable) or 'none'}); ask for at most {len(usable)}, or leave {role} out of "
                           "placement.replicas_apart to let them share nodes",
                           {"role": role, "count": counts[role], "nodes": usable})
    return []


def with_counts(options: dict[str, Any], counts: dict[str, int]) -> dict[str, Any]:
    """``options`` with ``roles.<role>.count`` set for each role of ``counts`` (a resize; a new dict)."""
    roles = {role: dict(spec) for role, spec in (options.get("roles") or {}).items()}
    for role, count in counts.items():
        roles.setdefault(role, {})["count"] = count
    return {**options, "roles": roles}
