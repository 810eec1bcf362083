"""api-server serves the built web UI under /ui as a single-page app, and says how to build it when absent."""
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from spindle_api.core.config import Settings
from spindle_api.main import build_app

INDEX = "<!doctype html><title>Spindle</title>"


@pytest.fixture
def dist(tmp_path: Path) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text(INDEX)
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log(1)")
    return tmp_path


def client_for(dist: Path) -> TestClient:
    return TestClient(build_app(Settings(web_ui_dist=dist, consul_url="http://127.0.0.1:1")))


@pytest.mark.parametrize("path", ["/ui/", "/ui/status", "/ui/clusters/alice/spark/3.5/7"])
def test_pages_get_index_html(dist, path):
    response = client_for(dist).get(path)
    assert response.status_code == 200 and response.text == INDEX
    assert response.headers["cache-control"] == "no-cache"


def test_ui_without_slash_redirects(dist):
    response = client_for(dist).get("/ui", follow_redirects=False)
    assert response.status_code == 307 and response.headers["location"].endswith("/ui/")


def test_assets_are_served_immutable(dist):
    response = client_for(dist).get("/ui/assets/index-abc123.js")
    assert response.status_code == 200 and "immutable" in response.headers["cache-control"]


def test_missing_asset_is_404_not_index_html(dist):
    response = client_for(dist).get("/ui/assets/gone.js")
    assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize("path", ["/ui", "/ui/", "/ui/status"])
def test_unbuilt_ui_answers_with_envelope(tmp_path, path):
    response = client_for(tmp_path / "dist").get(path)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "WEB_UI_NOT_BUILT" and "npm run build" in error["message"]


def test_status_reports_unreachable_consul(dist):
    response = client_for(dist).get("/status")
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "CONSUL_UNAVAILABLE"
