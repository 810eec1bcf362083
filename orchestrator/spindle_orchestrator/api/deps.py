"""Dependencies of the orchestrator's routes."""
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from spindle_common.auth import Caller, require
from spindle_common.db import session_scope


def get_session(request: Request) -> Iterator[Session]:
    """A GET answers from one snapshot (no GET here writes)."""
    yield from session_scope(request.app.state.settings.database_url, snapshot=request.method == "GET")


SessionDep = Annotated[Session, Depends(get_session)]
ServiceCaller = Annotated[Caller, Depends(require("service", "admin"))]
