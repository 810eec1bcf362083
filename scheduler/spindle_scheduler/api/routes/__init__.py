"""HTTP routes of scheduler, one module per resource."""
from fastapi import APIRouter

from spindle_scheduler.api.routes import placements, releases, tasks

routers: list[APIRouter] = [tasks.router, placements.router, releases.router]
