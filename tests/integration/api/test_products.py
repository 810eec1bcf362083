"""The catalog through the public API: listing, manifests, and 404s naming what exists; the
placement option every product takes, through plans (placed by the platform's scheduler) and launches."""
import json
import time
from pathlib import Path

from tests.integration.api.conftest import bearer

REPO = Path(__file__).resolve().parents[3]


def test_products_list_every_product(api, make_user):
    response = api.get("/products", headers=bearer(make_user("alice")))
    assert response.status_code == 200
    products = {(p["name"], p["version"]): p for p in response.json()["products"]}
    in_catalog = {(m.parent.parent.name, m.parent.name) for m in (REPO / "catalog").glob("*/*/manifest.json")}
    assert set(products) == in_catalog
    assert {("engine", "1.0"), ("hadoop", "3.3"), ("spark", "3.5"), ("static-web", "1.0"), ("kafka", "4.0"),
            ("cassandra", "5.0"), ("jupyterlab", "4")} <= in_catalog
    assert products[("engine", "1.0")]["roles"] == ["backend", "executor"]
    assert products[("spark", "3.5")]["roles"] == ["master", "worker"]
    assert products[("spark", "3.5")]["path"] == "/products/spark/3.5"


def test_the_catalog_shows_which_products_images_are_still_being_built(api, make_user, state_dir):
    """deploy/build-images' state files (spindle_common.images): spark's image building, kafka's failed."""
    (state_dir / "images" / "spindle_spark_3.5.json").write_text(json.dumps(
        {"image": "spindle/spark:3.5", "state": "building", "step": 4, "steps": 9}))
    (state_dir / "images" / "spindle_kafka_4.0.json").write_text(json.dumps(
        {"image": "spindle/kafka:4.0", "state": "failed", "message": "docker build failed: see build-kafka-4.0.log"}))
    (state_dir / "images" / "spindle_hadoop_3.3.json").write_text(json.dumps({"state": "ready"}))
    listed = api.get("/products", headers=bearer(make_user("alice"))).json()["products"]
    products = {p["name"]: p["images"] for p in listed}
    assert products["spark"] == {"state": "preparing", "image": "spindle/spark:3.5", "image_state": "building",
                                 "step": 4, "steps": 9, "message": "image spindle/spark:3.5 building (step 4 of 9)"}
    assert products["kafka"]["state"] == "failed" and products["kafka"]["message"] == \
        "image spindle/kafka:4.0 failed: docker build failed: see build-kafka-4.0.log"
    assert {name for name, images in products.items() if images["state"] == "ready"} == \
        {"hadoop", "static-web", "engine", "cassandra", "jupyterlab"}


def test_a_product_shows_its_manifest_and_options_schema(api, make_user):
    manifest = api.get("/products/spark/3.5", headers=bearer(make_user("alice"))).json()
    assert manifest["image"] == "spindle/spark:3.5"
    worker = manifest["options_schema"]["properties"]["roles"]["properties"]["worker"]
    assert worker["properties"]["count"]["maximum"] == 64


def test_unknown_product_or_version_is_404_naming_what_exists(api, make_user):
    token = make_user("alice")
    product = api.get("/products/flink/3", headers=bearer(token))
    assert product.status_code == 404 and product.json()["error"]["code"] == "PRODUCT_NOT_FOUND"
    version = api.get("/products/spark/1.0", headers=bearer(token))
    assert version.status_code == 404 and version.json()["error"]["details"]["versions"] == ["3.5"]


def test_the_catalog_needs_a_token(api):
    response = api.get("/products")
    assert response.status_code == 401 and response.json()["error"]["code"] == "UNAUTHENTICATED"


def test_openapi_documents_the_papers_endpoints(api):
    paths = api.get("/openapi.json").json()["paths"]
    assert {"/products", "/products/{product}/{version}", "/clusters/{username}/{product}/{version}/{cluster_id}",
            "/clusters/{username}/{product}/{version}/{cluster_id}/events", "/products/{product}/{version}/plan",
            "/admin/disks", "/admin/ip-pools"} <= set(paths)
    assert api.get("/docs").status_code == 200


def _plan(api, token, options, product="static-web/1.0"):
    response = api.post(f"/products/{product}/plan", json=options, headers=bearer(token))
    assert response.status_code == 200, response.text
    return response.json()


def test_a_plan_follows_the_placement_option_on_this_single_node(api, make_user):
    alice = make_user("alice")
    two = {"roles": {"server": {"count": 2}}}
    deadline = time.monotonic() + 30
    while not (spread := _plan(api, alice, {**two, "placement": {"strategy": "spread"}}))["placeable"]:
        assert time.monotonic() < deadline, spread  # the scheduler holds offers within a round or two
        time.sleep(0.5)
    [node] = {m["node"] for m in spread["members"]}
    assert sorted(m["member_id"] for m in spread["members"]) == ["server-1", "server-2"]
    pack = _plan(api, alice, {**two, "placement": {"strategy": "pack", "preferred_nodes": [node]}})
    assert pack["placeable"] and {m["node"] for m in pack["members"]} == {node}

    # Two servers held apart on one node: the second is refused, naming the node and why.
    apart = _plan(api, alice, {**two, "placement": {"anti_affinity": ["server"]}})
    assert apart["placeable"] is False and apart["members"] == []
    assert apart["reasons"] == [{"member_id": "server-2", "nodes": [{
        "node": node, "constraint": "anti_affinity",
        "message": "already has a member of role server of cluster plan-alice (anti-affinity: one per node)"}]}]
    assert apart["summary"].startswith(f"server-2 fits no node: {node}: already has a member of role server")
    assert _plan(api, alice, {"placement": {"anti_affinity": ["server"]}})["placeable"], "one server: nothing to part"

    # The only node excluded: nothing fits, the node says so.
    excluded = _plan(api, alice, {"placement": {"excluded_nodes": [node]}})
    assert excluded["placeable"] is False
    assert excluded["reasons"] == [{"member_id": "server-1", "nodes": [{
        "node": node, "constraint": "excluded", "message": "excluded by the launch's placement (excluded_nodes)"}]}]
    elsewhere = _plan(api, alice, {"placement": {"excluded_nodes": ["no-such-node"]}})
    assert elsewhere["placeable"] and elsewhere["members"][0]["node"] == node


def test_bad_placement_options_are_a_422_naming_each_problem(api, make_user, orchestrator_url, internal_token):
    alice = make_user("alice")
    bad = {"placement": {"strategy": "random", "anti_affinity": ["master"], "excluded_nodes": [7]}}
    for path in ("/products/static-web/1.0", "/products/static-web/1.0/plan"):
        response = api.post(path, json=bad, headers=bearer(alice))
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "INVALID_OPTIONS" and error["message"] == "the options do not fit static-web 1.0"
        assert error["details"]["errors"] == [
            {"path": "placement.anti_affinity.0", "message": "'master' is not one of ['server']"},
            {"path": "placement.excluded_nodes.0", "message": "7 is not of type 'string'"},
            {"path": "placement.strategy", "message": "'random' is not one of ['spread', 'pack']"}]
    top_level = api.post("/products/spark/3.5/plan", json={"strategy": "pack"}, headers=bearer(alice))
    assert top_level.status_code == 422 and "'strategy' was unexpected" in top_level.text
    assert api.get("/clusters/alice", headers=bearer(alice)).json()["items"] == [], "nothing was launched"


def test_a_launch_keeps_its_placement_in_its_options(api, make_user):
    alice = make_user("alice")
    placement = {"strategy": "pack", "anti_affinity": ["worker"], "replicas_apart": [], "preferred_nodes": [],
                 "excluded_nodes": ["n9"]}
    response = api.post("/products/spark/3.5", json={"placement": {k: v for k, v in placement.items() if v}},
                        headers=bearer(alice))
    assert response.status_code == 202, response.text
    assert response.json()["options"]["placement"] == placement
