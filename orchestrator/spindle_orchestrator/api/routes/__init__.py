"""HTTP routes of orchestrator, one module per resource."""
from fastapi import APIRouter

routers: list[APIRouter] = []
