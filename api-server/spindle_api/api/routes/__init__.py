"""HTTP routes of api-server, one module per resource."""
from fastapi import APIRouter

routers: list[APIRouter] = []
