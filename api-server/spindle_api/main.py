"""api-server: public REST API, users and API tokens, product catalog, web UI."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_api.api.routes import routers
from spindle_api.core.config import Settings
from spindle_api.web_ui import mount_web_ui
from spindle_common.catalog import load_catalog


def build_app(settings: Settings) -> FastAPI:
    app = create_service_app(settings, routers, description=__doc__)
    app.state.catalog = load_catalog(settings.catalog_root)  # a broken manifest stops the start here
    mount_web_ui(app, settings.web_ui_dist)
    return app


def run() -> None:
    run_service(Settings(), build_app)
