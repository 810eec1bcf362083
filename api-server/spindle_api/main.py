"""api-server: public REST API, users and API tokens, product catalog, web UI."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_api.api.routes import routers
from spindle_api.core.config import Settings


def build_app(settings: Settings) -> FastAPI:
    return create_service_app(settings, routers, description=__doc__)


def run() -> None:
    run_service(Settings(), build_app)
