"""HTTP routes of network-service, one module per resource."""
from fastapi import APIRouter

routers: list[APIRouter] = []
