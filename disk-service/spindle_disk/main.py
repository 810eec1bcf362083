"""disk-service: node and disk inventory, disk states, exclusive allocation, wipe on release, Mesos resources."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_disk import metrics
from spindle_disk.api.routes import routers
from spindle_disk.core.config import Settings
from spindle_disk.wipe import Wiper


def build_app(settings: Settings, resume_wipes: bool = True) -> FastAPI:
    """The service app; routes read ``settings`` and the background ``wiper`` from ``app.state``."""
    app = create_service_app(settings, routers, description=__doc__,
                             collectors=[metrics.collector(settings.database_url)])
    app.state.wiper = Wiper(settings, resume=resume_wipes)
    return app


def run() -> None:
    run_service(Settings(), build_app)
