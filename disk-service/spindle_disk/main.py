"""disk-service: node and disk inventory, disk states, exclusive allocation, wipe on release, Mesos resources."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_disk.api.routes import routers
from spindle_disk.core.config import Settings


def build_app(settings: Settings) -> FastAPI:
    return create_service_app(settings, routers, description=__doc__)


def run() -> None:
    run_service(Settings(), build_app)
