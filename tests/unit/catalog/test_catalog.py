"""The product catalog: real manifests load, broken ones fail naming file and field, options are
validated with every error listed and defaults applied."""
import copy
import json
from pathlib import Path

import pytest

from spindle_common.catalog import (
    CatalogError,
    load_catalog,
    load_manifest,
    member_requests,
    platform_defaults,
    replicas_sharing,
    role_counts,
    validate_options,
)
from spindle_common.contracts import ClusterSpec
from spindle_common.errors import ApiError

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(REPO_CATALOG)


def write_manifest(root: Path, manifest: dict, folder: str = "static-web/1.0") -> Path:
    path = root / folder / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return path


def test_the_real_products_load_and_their_defaults_are_valid_options(catalog):
    assert [(m["name"], m["version"]) for m in catalog.manifests()] == [("cassandra", "5.0"),
                                                                         ("engine", "1.0"), ("hadoop", "3.3"),
                                                                         ("jupyterlab", "4"), ("kafka", "4.0"),
                                                                         ("spark", "3.5"), ("static-web", "1.0")]
    spark = validate_options(catalog.get("spark", "3.5"), {})
    assert spark["roles"]["worker"] == {"count": 2, "cpus": 0.5, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 0}}
    assert spark["settings"] == {"worker_overhead_mb": 512} and spark["wait_for_resources"] is False
    web = validate_options(catalog.get("static-web", "1.0"), {})
    assert web["roles"]["server"]["count"] == 1
    engine = validate_options(catalog.get("engine", "1.0"), {})
    assert engine["roles"]["executor"] == {"count": 2, "cpus": 0.75, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 0}}
    assert engine["roles"]["backend"]["count"] == 1


def test_options_given_are_kept_and_the_rest_defaulted(catalog):
    resolved = validate_options(catalog.get("spark", "3.5"), {"roles": {"worker": {"count": 5}}})
    assert resolved["roles"]["worker"] == {"count": 5, "cpus": 0.5, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 0}}
    assert resolved["roles"]["master"]["count"] == 1


@pytest.mark.parametrize(("product", "version", "role", "given", "disks"), [
    ("spark", "3.5", "worker", None, {"hdd": 2}),  # not given: the schema's defaults
    ("spark", "3.5", "worker", {}, {}),  # given empty: no disk
    ("spark", "3.5", "worker", {"ssd": 1}, {"ssd": 1}),  # not one ssd beside the default 2 hdd
    ("spark", "3.5", "worker", {"hdd": 1, "ssd": 1}, {"hdd": 1, "ssd": 1}),
    ("engine", "1.0", "executor", {"ssd": 2}, {"ssd": 2}),
    ("hadoop", "3.3", "namenode", {"ssd": 1}, {"ssd": 1}),
    ("kafka", "4.0", "broker", {"ssd": 1}, {"ssd": 1}),
    ("static-web", "1.0", "server", None, {"hdd": 1}),  # no schema default: the manifest's role disks
    ("static-web", "1.0", "server", {"ssd": 1}, {"ssd": 1}),
])
def test_a_roles_disks_once_given_are_all_it_asks_for(catalog, product, version, role, given, disks):
    manifest = catalog.get(product, version)
    options = {"roles": {role: {} if given is None else {"disks": given}}}
    resolved = validate_options(manifest, options)
    [member, *_] = [m for m in member_requests(manifest, resolved) if m["role"] == role]
    assert member["disks"] == disks


def test_every_invalid_option_is_listed_by_path(catalog):
    manifest = catalog.get("spark", "3.5")
    with pytest.raises(ApiError) as caught:
        validate_options(manifest, {"roles": {"worker": {"count": 65, "mem_mb": "lots"}}, "colour": "blue"})
    error = caught.value
    assert (error.status, error.code) == (422, "INVALID_OPTIONS")
    paths = {e["path"] for e in error.details["errors"]}
    assert paths == {"(top level)", "roles.worker.count", "roles.worker.mem_mb"}
    assert any("65 is greater than the maximum of 64" in e["message"] for e in error.details["errors"])


def test_validating_does_not_change_the_callers_options(catalog):
    options = {"roles": {"worker": {"count": 3}}}
    before = copy.deepcopy(options)
    validate_options(catalog.get("spark", "3.5"), options)
    assert options == before


def test_unknown_product_or_version_names_what_exists(catalog):
    with pytest.raises(ApiError) as product:
        catalog.get("flink", "3")
    assert (product.value.status, product.value.code) == (404, "PRODUCT_NOT_FOUND")
    assert product.value.details["products"] == ["cassandra", "engine", "hadoop", "jupyterlab", "kafka", "spark",
                                                 "static-web"]
    with pytest.raises(ApiError) as version:
        catalog.get("spark", "9.9")
    assert (version.value.code, version.value.details["versions"]) == ("VERSION_NOT_FOUND", ["3.5"])


def test_member_requests_follow_counts_and_resources(catalog):
    manifest = catalog.get("spark", "3.5")
    members = member_requests(manifest, validate_options(manifest, {"roles": {"worker": {"count": 3, "cpus": 4}}}))
    assert [(m["role"], m["index"]) for m in members] == [("master", 1), ("worker", 1), ("worker", 2), ("worker", 3)]
    assert members[1] == {"role": "worker", "index": 1, "cpus": 4.0, "mem_mb": 2048, "disks": {"hdd": 2}}
    assert members[0]["disks"] == {}


@pytest.mark.parametrize("breakage, field", [
    (lambda m: m.pop("image"), "(top level)"),
    (lambda m: m["roles"]["server"].update(cpus="two"), "roles.server.cpus"),
    (lambda m: m["roles"]["server"]["disks"].update(floppy=1), "roles.server.disks"),
    (lambda m: m["roles"]["server"]["ports"][0].update(port=70000), "roles.server.ports.0.port"),
    (lambda m: m["roles"]["server"].update(health={}), "roles.server.health"),
    (lambda m: m["roles"]["server"].update(count={"default": 9, "min": 1, "max": 5}), "roles.server.count"),
    (lambda m: m["options_schema"].update(type="objekt"), "options_schema.type"),
    (lambda m: m["options_schema"]["properties"]["wait_for_resources"].update(default="no"), "options_schema"),
    (lambda m: m.update(version="2.0"), "name/version"),
    (lambda m: m["roles"]["server"].update(drain={"by": "client", "done": ["true"]}), "roles.server.drain.by"),
    (lambda m: m["roles"]["server"].update(drain={"by": "self", "done": ["true"]}), "roles.server.drain.start"),
    (lambda m: m["roles"]["server"].update(drain={"by": "server", "start": ["true"], "done": ["true"]}),
     "roles.server.drain.start"),
])
def test_a_broken_manifest_fails_naming_file_and_field(tmp_path, breakage, field):
    manifest = json.loads((REPO_CATALOG / "static-web" / "1.0" / "manifest.json").read_text())
    breakage(manifest)
    write_manifest(tmp_path, manifest)
    with pytest.raises(CatalogError) as caught:
        load_catalog(tmp_path)
    assert "manifest.json" in str(caught.value) and f"field {field}" in str(caught.value)


def test_a_manifest_that_is_not_json_names_its_file(tmp_path):
    path = tmp_path / "broken" / "1" / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(CatalogError, match=r"broken/1/manifest.json: not readable JSON"):
        load_catalog(tmp_path)


# --- the shared placement option ---------------------------------------------------------------------

PLACEMENT_DEFAULTS = {"strategy": "spread", "anti_affinity": [], "replicas_apart": [], "preferred_nodes": [],
                      "excluded_nodes": []}


@pytest.mark.parametrize("product, version, roles, replicas", [
    ("cassandra", "5.0", ["node"], ["node"]), ("kafka", "4.0", ["broker"], ["broker"]),
    ("engine", "1.0", ["backend", "executor"], []),
    ("hadoop", "3.3", ["namenode", "datanode", "journalnode", "resourcemanager"],
     ["namenode", "datanode", "journalnode"]),
    ("spark", "3.5", ["master", "worker"], []), ("static-web", "1.0", ["server"], []),
])
def test_every_product_takes_the_shared_placement_option_with_its_own_roles(catalog, product, version, roles,
                                                                            replicas):
    """Its roles in anti_affinity and replicas_apart; replicas_apart defaults to its replica roles
    (those holding copies of each other's data)."""
    manifest = catalog.get(product, version)
    placement = manifest["options_schema"]["properties"]["placement"]
    assert "$ref" not in placement and placement["properties"]["anti_affinity"]["items"] == {"enum": roles}
    assert placement["properties"]["replicas_apart"]["items"] == {"enum": roles}
    assert placement["properties"]["strategy"]["enum"] == ["spread", "pack"]
    assert validate_options(manifest, {})["placement"] == {**PLACEMENT_DEFAULTS, "replicas_apart": replicas}
    assert ClusterSpec.placement_fields(validate_options(manifest, {}))["replica_roles"] == replicas


HADOOP_3_DN = {"roles": {"datanode": {"count": 3}}}
# (why, options, the platform's nodes, the roles that share a node, or the 422's details)
REPLICAS_TABLE = [
    ("three nodes for three DataNodes", HADOOP_3_DN, ["n1", "n2", "n3"], []),
    ("one node: they share it", HADOOP_3_DN, ["n1"], ["datanode"]),
    ("one DataNode on one node shares nothing", {"roles": {"datanode": {"count": 1}}}, ["n1"], []),
    ("no node known (the inventory away): nothing checked", HADOOP_3_DN, [], []),
    ("two nodes for three: refused", HADOOP_3_DN, ["n1", "n2"],
     {"role": "datanode", "count": 3, "nodes": ["n1", "n2"]}),
    ("an excluded node does not count", {**HADOOP_3_DN, "placement": {"excluded_nodes": ["n3"]}},
     ["n1", "n2", "n3"], {"role": "datanode", "count": 3, "nodes": ["n1", "n2"]}),
    ("relaxed: replicas_apart left empty", {**HADOOP_3_DN, "placement": {"replicas_apart": []}}, ["n1", "n2"], []),
]


@pytest.mark.parametrize("why, options, nodes, expected", REPLICAS_TABLE, ids=[r[0] for r in REPLICAS_TABLE])
def test_replicas_apart_are_refused_on_too_few_nodes_and_share_a_one_node_platform(catalog, why, options, nodes,
                                                                                    expected):
    manifest = catalog.get("hadoop", "3.3")
    resolved = validate_options(manifest, options)
    if isinstance(expected, dict):
        with pytest.raises(ApiError) as refused:
            replicas_sharing(manifest, resolved, nodes)
        assert (refused.value.status, refused.value.code, refused.value.details) == (
            422, "REPLICAS_CANNOT_BE_APART", expected), why
        assert "role datanode: 3 members" in refused.value.message and ", ".join(expected["nodes"]) in \
            refused.value.message
    else:
        assert replicas_sharing(manifest, resolved, nodes) == expected, why


def test_a_launch_with_placement_validates_and_keeps_it(catalog):
    placement = {"strategy": "pack", "anti_affinity": ["worker"], "preferred_nodes": ["node-1"],
                 "excluded_nodes": ["node-2", "gpu.rack3"]}
    resolved = validate_options(catalog.get("spark", "3.5"), {"placement": placement})
    assert resolved["placement"] == {**placement, "replicas_apart": []}
    partial = validate_options(catalog.get("spark", "3.5"), {"placement": {"excluded_nodes": ["node-2"]}})
    assert partial["placement"] == {**PLACEMENT_DEFAULTS, "excluded_nodes": ["node-2"]}
    assert ClusterSpec.placement_fields(resolved) == {"strategy": "pack", "anti_affinity_roles": ["worker"],
                                                      "replica_roles": [], "preferred_hosts": ["node-1"],
                                                      "excluded_hosts": ["node-2", "gpu.rack3"]}
    assert ClusterSpec.placement_fields({}) == {"strategy": "spread", "anti_affinity_roles": [], "replica_roles": [],
                                                "preferred_hosts": [], "excluded_hosts": []}, "options of old clusters"


@pytest.mark.parametrize("placement, path, message", [
    ({"strategy": "random"}, "placement.strategy", "'random' is not one of ['spread', 'pack']"),
    ({"anti_affinity": ["executor"]}, "placement.anti_affinity.0", "'executor' is not one of ['master', 'worker']"),
    ({"anti_affinity": "worker"}, "placement.anti_affinity", "'worker' is not of type 'array'"),
    ({"anti_affinity": ["worker", "worker"]}, "placement.anti_affinity", "has non-unique elements"),
    ({"preferred_nodes": [7]}, "placement.preferred_nodes.0", "7 is not of type 'string'"),
    ({"excluded_nodes": [None]}, "placement.excluded_nodes.0", "None is not of type 'string'"),
    ({"excluded_nodes": [""]}, "placement.excluded_nodes.0", "'' should be non-empty"),
    ({"excluded_nodes": ["no spaces"]}, "placement.excluded_nodes.0", "does not match"),
    ({"preferred_nodes": ["n1"], "excluded_nodes": ["n1"]}, "placement.excluded_nodes",
     "'n1' is also in preferred_nodes"),
    ({"colour": "blue"}, "placement", "Additional properties are not allowed ('colour' was unexpected)"),
    ("spread", "placement", "'spread' is not of type 'object'"),
])
def test_bad_placement_is_a_422_naming_path_and_problem(catalog, placement, path, message):
    with pytest.raises(ApiError) as caught:
        validate_options(catalog.get("spark", "3.5"), {"placement": placement})
    error = caught.value
    assert (error.status, error.code, error.message) == (422, "INVALID_OPTIONS", "the options do not fit spark 3.5")
    assert {p["path"] for p in error.details["errors"]} == {path}
    assert any(message in p["message"] for p in error.details["errors"]), error.details


def test_a_top_level_strategy_is_not_an_option(catalog):
    with pytest.raises(ApiError) as caught:
        validate_options(catalog.get("spark", "3.5"), {"strategy": "pack"})
    assert caught.value.details["errors"][0]["path"] == "(top level)"


def test_keywords_beside_the_placement_ref_win(tmp_path):
    manifest = json.loads((REPO_CATALOG / "static-web" / "1.0" / "manifest.json").read_text())
    manifest["options_schema"]["properties"]["placement"]["default"] = {"anti_affinity": ["server"]}
    write_manifest(tmp_path, manifest)
    loaded = load_catalog(tmp_path).get("static-web", "1.0")
    assert validate_options(loaded, {})["placement"] == {**PLACEMENT_DEFAULTS, "anti_affinity": ["server"]}


@pytest.mark.parametrize("placement", [None, {"type": "object"}, {"$ref": "#/$defs/placement"}])
def test_a_manifest_without_the_shared_placement_fails_to_load(tmp_path, placement):
    manifest = json.loads((REPO_CATALOG / "static-web" / "1.0" / "manifest.json").read_text())
    properties = manifest["options_schema"]["properties"]
    properties.pop("placement") if placement is None else properties.update(placement=placement)
    write_manifest(tmp_path, manifest)
    with pytest.raises(CatalogError, match=r"field options_schema.properties.placement: needs \"placement\""):
        load_catalog(tmp_path)


@pytest.mark.parametrize("nodes, given, ha, namenodes, journals", [
    ([], None, False, 1, 0),
    (["n1"], None, False, 1, 0),
    (["n1", "n2"], None, False, 1, 0),
    (["n1", "n2", "n3"], None, True, 2, 3),
    (["n1", "n2", "n3", "n4"], False, False, 1, 0),  # given: kept
    (["n1"], True, True, 2, 3),
])
def test_hdfs_ha_is_on_by_default_from_three_nodes(catalog, nodes, given, ha, namenodes, journals):
    manifest = catalog.get("hadoop", "3.3")
    options = validate_options(manifest, {} if given is None else {"settings": {"ha": given}})
    decided = platform_defaults(manifest, options, nodes)
    assert decided["settings"]["ha"] is ha and decided["settings"]["replication"] == 3
    assert (role_counts(manifest, decided)["namenode"], role_counts(manifest, decided)["journalnode"]) == \
        (namenodes, journals)
    assert "ha" not in options.get("settings", {}) or given is not None  # the input is not changed


def test_a_count_that_a_setting_decides_must_fit_the_roles_bounds(tmp_path):
    manifest = json.loads((REPO_CATALOG / "static-web" / "1.0" / "manifest.json").read_text())
    manifest["roles"]["server"]["count"]["when"] = {"big": 99}
    path = tmp_path / "static-web" / "1.0" / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(manifest))
    with pytest.raises(CatalogError, match="roles.server.count"):
        load_manifest(path)
