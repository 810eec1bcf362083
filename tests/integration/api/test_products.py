"""The catalog through the public API: listing, manifests, and 404s naming what exists."""
from tests.integration.api.conftest import bearer


def test_products_list_every_product(api, make_user):
    response = api.get("/products", headers=bearer(make_user("alice")))
    assert response.status_code == 200
    products = {(p["name"], p["version"]): p for p in response.json()["products"]}
    assert set(products) == {("engine", "1.0"), ("spark", "3.5"), ("static-web", "1.0")}
    assert products[("engine", "1.0")]["roles"] == ["backend", "executor"]
    assert products[("spark", "3.5")]["roles"] == ["master", "worker"]
    assert products[("spark", "3.5")]["path"] == "/products/spark/3.5"


def test_a_product_shows_its_manifest_and_options_schema(api, make_user):
    manifest = api.get("/products/spark/3.5", headers=bearer(make_user("alice"))).json()
    assert manifest["image"] == "spindle/spark:3.5"
    worker = manifest["options_schema"]["properties"]["roles"]["properties"]["worker"]
    assert worker["properties"]["count"]["maximum"] == 64


def test_unknown_product_or_version_is_404_naming_what_exists(api, make_user):
    token = make_user("alice")
    product = api.get("/products/hadoop/3", headers=bearer(token))
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
