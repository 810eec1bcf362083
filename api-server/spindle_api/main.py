"""api-server: public REST API, users and API tokens, product catalog, web UI.

Every error is `{"error": {"code", "message", "details"}}` with the status each operation documents;
a method a path does not serve is a 405 `METHOD_NOT_ALLOWED` whose `Allow` header lists the ones it does."""
from fastapi import FastAPI
from fastapi.routing import APIRoute

from spindle_api.api.routes import routers
from spindle_api.body_limit import BodyLimit
from spindle_api.core.config import Settings
from spindle_api.streams import StreamLimiter
from spindle_api.web_ui import mount_web_ui
from spindle_common.catalog import load_catalog
from spindle_common.service import create_service_app, run_service


def build_app(settings: Settings) -> FastAPI:
    app = create_service_app(settings, routers, description=__doc__)
    app.state.catalog = load_catalog(settings.catalog_root)  # a broken manifest stops the start here
    app.state.streams = StreamLimiter(settings.max_streams_per_user)
    for route in app.routes:  # the shared /health answers 503 when its database does not
        if isinstance(route, APIRoute) and route.path == "/health":
            route.responses[503] = {"description": "PostgreSQL is unreachable (DATABASE_UNAVAILABLE)", "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}
    app.add_middleware(BodyLimit)
    mount_web_ui(app, settings.web_ui_dist)
    return app


def run() -> None:
    run_service(Settings(), build_app)
