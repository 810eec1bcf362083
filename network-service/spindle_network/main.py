"""network-service: IP pools, floating-IP allocation, reservation and moves, DNS names."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_network import metrics
from spindle_network.api.routes import routers
from spindle_network.core.config import Settings


def build_app(settings: Settings) -> FastAPI:
    return create_service_app(settings, routers, description=__doc__,
                              collectors=[metrics.collector(settings.database_url)])


def run() -> None:
    run_service(Settings(), build_app)
