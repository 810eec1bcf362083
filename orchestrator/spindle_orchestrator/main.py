"""orchestrator: cluster lifecycle state machine, product configuration, Consul registration, teardown."""
from fastapi import FastAPI

from spindle_common.catalog import load_catalog
from spindle_common.clients import DiskClient, SchedulerClient
from spindle_common.service import create_service_app, run_service
from spindle_orchestrator import metrics
from spindle_orchestrator.api.routes import routers
from spindle_orchestrator.core.config import Settings
from spindle_orchestrator.event_stream import EventHub
from spindle_orchestrator.worker import running_worker


def build_app(settings: Settings) -> FastAPI:
    app = create_service_app(settings, routers, description=__doc__, background=running_worker,
                             collectors=[metrics.collector(settings.database_url)])
    app.state.event_hub = EventHub(settings.database_url)
    app.state.catalog = load_catalog(settings.catalog_root)  # launches' demands for quotas
    # Datasets' disk holds are this service's own (a reclaim releases them).
    app.state.disks = DiskClient(settings.disk_service_url, settings.internal_token, actor="orchestrator",
                                 identity_key=settings.identity_key)
    # Keeping replicas apart counts the platform's nodes (the scheduler's view) at launch and resize.
    app.state.scheduler = SchedulerClient(settings.scheduler_url, settings.internal_token, actor="orchestrator",
                                          identity_key=settings.identity_key)
    return app


def run() -> None:
    run_service(Settings(), build_app)
