from spindle_api.models import Base
from spindle_common.migrations import run_migrations

run_migrations(Base.metadata)
