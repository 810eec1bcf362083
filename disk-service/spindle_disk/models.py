"""Tables owned by disk-service, all in the PostgreSQL schema ``disk``."""
from sqlalchemy.orm import DeclarativeBase

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("disk")
