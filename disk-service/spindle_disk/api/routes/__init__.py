"""HTTP routes of disk-service, one module per resource."""
from fastapi import APIRouter

routers: list[APIRouter] = []
