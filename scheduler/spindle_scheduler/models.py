"""Tables owned by scheduler, all in the PostgreSQL schema ``scheduler``."""
from sqlalchemy.orm import DeclarativeBase

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("scheduler")
