"""HTTP routes of api-server, one module per resource."""
from fastapi import APIRouter

from spindle_api.api.routes import status, users

routers: list[APIRouter] = [status.router, users.router]
