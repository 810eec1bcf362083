"""A product's ``bindings`` become its ``bind`` launch option: a declared name takes a cluster id."""
import copy
import json
from pathlib import Path

import pytest

from spindle_common.catalog import CatalogError, load_catalog, load_manifest, validate_options
from spindle_common.errors import ApiError

SPARK = load_catalog(Path("catalog")).get("spark", "3.5")


@pytest.mark.parametrize("options", [{}, {"bind": {}}, {"bind": {"hdfs": "c0123456789"}}])
def test_valid_bindings(options):
    assert validate_options(SPARK, options).get("bind", {}) == options.get("bind", {})


@pytest.mark.parametrize(("options", "path"), [
    ({"bind": {"hdfs": "../c0123456789"}}, "bind.hdfs"),
    ({"bind": {"hdfs": 7}}, "bind.hdfs"),
    ({"bind": {"kafka": "c0123456789"}}, "bind"),
    ({"bind": "c0123456789"}, "bind"),
])
def test_bad_bindings_are_invalid_options(options, path):
    with pytest.raises(ApiError) as caught:
        validate_options(SPARK, options)
    assert caught.value.code == "INVALID_OPTIONS"
    assert [e["path"] for e in caught.value.details["errors"]] == [path]


def test_a_product_without_bindings_takes_no_bind_option():
    web = load_catalog(Path("catalog")).get("static-web", "1.0")
    assert "bind" not in web["options_schema"]["properties"]
    with pytest.raises(ApiError):
        validate_options(web, {"bind": {"hdfs": "c0123456789"}})


def test_a_manifest_writing_its_own_bind_option_is_refused(tmp_path):
    manifest = json.loads(Path("catalog/spark/3.5/manifest.json").read_text())
    broken = copy.deepcopy(manifest)
    broken["options_schema"]["properties"]["bind"] = {"type": "object"}
    folder = tmp_path / "spark" / "3.5"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps(broken))
    with pytest.raises(CatalogError, match="options_schema.properties.bind"):
        load_manifest(folder / "manifest.json")
    del manifest["bindings"]["hdfs"]["product"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CatalogError, match="bindings.hdfs"):
        load_manifest(folder / "manifest.json")
