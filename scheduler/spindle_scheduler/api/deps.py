"""Dependencies of the scheduler's routes: who may call, and the running Mesos framework."""
from typing import Annotated

from fastapi import Depends, Request

from spindle_common.auth import Caller, require
from spindle_common.errors import ApiError

# ``require`` is ``caller_dependency(settings.internal_token, ...)`` with the serving app's settings.
ServiceCaller = Annotated[Caller, Depends(require("service", "admin"))]


def framework(request: Request):
    """The running framework, or 503 when the scheduler runs without a Mesos master."""
    fw = getattr(request.app.state, "framework", None)
    if fw is None:
        raise ApiError(503, "NO_MESOS_MASTER", "the scheduler runs without a Mesos master (SPINDLE_MESOS_MASTER unset)")
    return fw
