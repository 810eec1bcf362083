"""Dependencies of disk-service's routes: settings, a DB session, the wiper, and who may call."""
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from spindle_common.auth import Caller, require
from spindle_common.db import session_scope
from spindle_disk.core.config import Settings
from spindle_disk.wipe import Wiper


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_session(settings: Annotated[Settings, Depends(get_settings)]) -> Iterator[Session]:
    yield from session_scope(settings.database_url)


def get_wiper(request: Request) -> Wiper:
    return request.app.state.wiper


SessionDep = Annotated[Session, Depends(get_session)]
WiperDep = Annotated[Wiper, Depends(get_wiper)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
Admin = Annotated[Caller, Depends(require("admin"))]
# The scheduler/orchestrator (role service) and admins allocate, release and read agent resources.
ServiceOrAdmin = Annotated[Caller, Depends(require("service", "admin"))]
# What a node's agents do (role node, signed with the nodes' key): register and heartbeat their own
# node, report its disks and their wipes, read its Mesos resources.
NodeOrAdmin = Annotated[Caller, Depends(require("node", "admin"))]
ServiceNodeOrAdmin = Annotated[Caller, Depends(require("service", "node", "admin"))]
