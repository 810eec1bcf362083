"""Tables owned by orchestrator, all in the PostgreSQL schema ``orchestrator``."""
from sqlalchemy.orm import DeclarativeBase

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("orchestrator")
