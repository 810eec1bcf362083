"""scheduler: Mesos framework: placement of cluster members and job drivers on offers (cpus, memory, whole disks)."""
from fastapi import FastAPI

from spindle_common.service import create_service_app, run_service
from spindle_scheduler import metrics
from spindle_scheduler.api.routes import jobs, routers
from spindle_scheduler.core.config import Settings
from spindle_scheduler.mesos.driver import running_framework


def build_app(settings: Settings) -> FastAPI:
    return create_service_app(settings, [*routers, jobs.router], description=__doc__, background=running_framework,
                              collectors=metrics.collectors(settings.database_url))


def run() -> None:
    run_service(Settings(), build_app)
