from spindle_common.migrations import run_migrations
from spindle_orchestrator.models import Base

run_migrations(Base.metadata)
