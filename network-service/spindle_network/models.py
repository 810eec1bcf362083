"""Tables owned by network-service, all in the PostgreSQL schema ``network``."""
from sqlalchemy.orm import DeclarativeBase

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("network")
