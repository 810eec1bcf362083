"""The manifest's ``security`` (per role and for jobs): what a product may ask of its containers is
checked when the catalog loads, naming file and field; the real products ask for what they get."""
import copy
import json
from pathlib import Path

import pytest

from spindle_common.catalog import CatalogError, load_catalog, load_manifest
from spindle_common.contracts import ContainerSpec, SecuritySpec

REPO_CATALOG = Path(__file__).resolve().parents[3] / "catalog"
BASE = json.loads((REPO_CATALOG / "static-web" / "1.0" / "manifest.json").read_text())


def manifest_with(tmp_path: Path, where: str, security: object) -> Path:
    manifest = copy.deepcopy(BASE)
    target = manifest["jobs"] if where == "jobs" else manifest["roles"]["server"]
    target["security"] = security
    path = tmp_path / "static-web" / "1.0" / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest))
    return path


@pytest.mark.parametrize("where", ["role", "jobs"])
@pytest.mark.parametrize(("security", "field", "problem"), [
    ({"cap_add": ["SYS_ADMIN"]}, "security.cap_add.0", "'SYS_ADMIN' is not one of"),
    ({"cap_add": ["NET_RAW"]}, "security.cap_add.0", "'NET_RAW' is not one of"),
    ({"cap_add": ["MKNOD"]}, "security.cap_add.0", "'MKNOD' is not one of"),
    ({"cap_add": ["CHOWN", "CHOWN"]}, "security.cap_add", "has non-unique elements"),
    ({"cap_add": "CHOWN"}, "security.cap_add", "is not of type 'array'"),
    ({"user": "nobody"}, "security.user", "does not match"),
    ({"user": "65534:"}, "security.user", "does not match"),
    ({"user": 65534}, "security.user", "is not of type 'string'"),
    ({"pids_limit": 8}, "security.pids_limit", "less than the minimum of 16"),
    ({"pids_limit": 100000}, "security.pids_limit", "greater than the maximum of 4096"),
    ({"read_only_root": "yes"}, "security.read_only_root", "is not of type 'boolean'"),
    ({"privileged": True}, "security", "Additional properties are not allowed ('privileged'"),
    ({"security_opt": ["seccomp=unconfined"]}, "security", "Additional properties are not allowed"),
])
def test_a_security_the_platform_does_not_allow_fails_naming_the_field(tmp_path, where, security, field, problem):
    path = manifest_with(tmp_path, where, security)
    with pytest.raises(CatalogError) as caught:
        load_manifest(path)
    prefix = "jobs" if where == "jobs" else "roles.server"
    assert f"static-web/1.0/manifest.json: field {prefix}.{field}: " in str(caught.value)
    assert problem in str(caught.value)


@pytest.mark.parametrize("security", [
    {}, {"user": "65534:65534", "read_only_root": True}, {"user": "1000"}, {"cap_add": ["CHOWN", "SETUID", "SETGID"]},
    {"pids_limit": 16}, {"pids_limit": 4096},
])
def test_an_allowed_security_loads_and_is_a_valid_container_security(tmp_path, security):
    manifest = load_manifest(manifest_with(tmp_path, "role", security))
    assert manifest["roles"]["server"]["security"] == security
    assert SecuritySpec.model_validate(security).model_dump(exclude_defaults=True) == security


def test_the_real_products_security():
    catalog = load_catalog(REPO_CATALOG)
    nobody = {"user": "65534:65534", "read_only_root": True}
    web = catalog.get("static-web", "1.0")
    assert web["roles"]["server"]["security"] == {**nobody, "pids_limit": 256}
    assert web["jobs"]["security"] == nobody
    spark = catalog.get("spark", "3.5")
    assert [spark["roles"]["master"]["security"], spark["roles"]["worker"]["security"],
            spark["jobs"]["security"]] == [nobody] * 3
    hadoop = catalog.get("hadoop", "3.3")  # the disks are chowned to nobody before the start
    assert [*[role["security"] for role in hadoop["roles"].values()], hadoop["jobs"]["security"]] == [nobody] * 5
    assert catalog.get("cassandra", "5.0")["roles"]["node"]["security"] == nobody
    engine = catalog.get("engine", "1.0")  # root inside, with every capability dropped
    for part in [*engine["roles"].values(), engine["jobs"]]:
        security = part.get("security", {})
        assert SecuritySpec.model_validate(security) == SecuritySpec()


@pytest.mark.parametrize(("user", "uid_gid"), [(None, None), ("65534", (65534, 65534)), ("1000:2000", (1000, 2000)),
                                               ("0", (0, 0))])
def test_the_user_gives_uid_and_gid(user, uid_gid):
    assert SecuritySpec(user=user).uid_gid == uid_gid


def test_a_container_spec_without_security_gets_the_defaults():
    spec = ContainerSpec(image="i")
    assert spec.security == SecuritySpec() and spec.security.cap_add == [] and spec.security.pids_limit == 512
    assert spec.security.read_only_root is False and spec.security.user is None
