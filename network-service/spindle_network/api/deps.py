"""Dependencies of network-service's routes."""
from collections.abc import Iterator
from typing import Annotated

import docker
from fastapi import Depends, Request
from sqlalchemy.orm import Session

from spindle_common.auth import Caller, require
from spindle_common.consul import ConsulClient
from spindle_common.db import session_scope


def get_session(request: Request) -> Iterator[Session]:
    yield from session_scope(request.app.state.settings.database_url)


def get_docker(request: Request) -> docker.DockerClient:
    if getattr(request.app.state, "docker", None) is None:
        request.app.state.docker = docker.from_env()
    return request.app.state.docker


def get_consul(request: Request) -> ConsulClient:
    if getattr(request.app.state, "consul", None) is None:
        request.app.state.consul = ConsulClient(request.app.state.settings.consul_url)
    return request.app.state.consul


SessionDep = Annotated[Session, Depends(get_session)]
DockerDep = Annotated[docker.DockerClient, Depends(get_docker)]
ConsulDep = Annotated[ConsulClient, Depends(get_consul)]
Admin = Annotated[Caller, Depends(require("admin"))]
ServiceOrAdmin = Annotated[Caller, Depends(require("service", "admin"))]
# Node agents (role node) read the pools, to make each macvlan pool's Docker network on their node.
NodeOrAdmin = Annotated[Caller, Depends(require("node", "admin"))]
