"""The product catalog: real manifests load, broken ones fail naming file and field, options are
validated with every error listed and defaults applied."""
import copy
import json
from pathlib import Path

import pytest

from spindle_common.catalog import CatalogError, load_catalog, member_requests, validate_options
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
    assert [(m["name"], m["version"]) for m in catalog.manifests()] == [("engine", "1.0"), ("spark", "3.5"),
                                                                         ("static-web", "1.0")]
    spark = validate_options(catalog.get("spark", "3.5"), {})
    assert spark["roles"]["worker"] == {"count": 2, "cpus": 0.5, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 0}}
    assert spark["settings"] == {"worker_overhead_mb": 512} and spark["wait_for_resources"] is False
    web = validate_options(catalog.get("static-web", "1.0"), {})
    assert web["roles"]["server"]["count"] == 1
    engine = validate_options(catalog.get("engine", "1.0"), {})
    assert engine["roles"]["executor"] == {"count": 2, "cpus": 0.75, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 0}}
    assert engine["roles"]["backend"]["count"] == 1


def test_options_given_are_kept_and_the_rest_defaulted(catalog):
    resolved = validate_options(catalog.get("spark", "3.5"), {"roles": {"worker": {"count": 5, "disks": {"ssd": 1}}}})
    assert resolved["roles"]["worker"] == {"count": 5, "cpus": 0.5, "mem_mb": 2048, "disks": {"hdd": 2, "ssd": 1}}
    assert resolved["roles"]["master"]["count"] == 1


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
        catalog.get("hadoop", "3")
    assert (product.value.status, product.value.code) == (404, "PRODUCT_NOT_FOUND")
    assert product.value.details["products"] == ["engine", "spark", "static-web"]
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
