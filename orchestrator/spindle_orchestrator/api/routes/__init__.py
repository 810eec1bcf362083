"""HTTP routes of orchestrator, one module per resource."""
from fastapi import APIRouter

from spindle_orchestrator.api.routes import clusters

routers: list[APIRouter] = [clusters.router]
