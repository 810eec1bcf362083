"""HTTP routes of scheduler, one module per resource."""
from fastapi import APIRouter

routers: list[APIRouter] = []
