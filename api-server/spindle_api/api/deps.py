"""Request dependencies: settings, DB session, the authenticated user, the catalog, the orchestrator."""
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import select
from sqlalchemy.orm import Session

from spindle_api.core.config import Settings
from spindle_api.models import User
from spindle_api.timeseries import TimeSeriesClient
from spindle_api.tokens import user_for_token
from spindle_api.upstream import service_client
from spindle_common.catalog import Catalog
from spindle_common.clients import ServiceClient
from spindle_common.db import session_factory
from spindle_common.errors import ApiError


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_session(settings: Annotated[Settings, Depends(get_settings)]) -> Iterator[Session]:
    with session_factory(settings.database_url)() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_settings)]


# Documented in OpenAPI as the bearer security scheme; a missing or non-Bearer header is our 401 below.
bearer = HTTPBearer(auto_error=False, scheme_name="ApiToken", description="an API token: Authorization: Bearer <token>")


def current_user(session: SessionDep,
                 credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)] = None) -> User:
    """The user whose API token is in ``Authorization: Bearer …``; 401 otherwise."""
    token = credentials.credentials.strip() if credentials else ""
    if not token:
        raise ApiError(401, "UNAUTHENTICATED", "send your API token as 'Authorization: Bearer <token>'")
    return signed_in(session, token)


def signed_in(session: Session, token: str) -> User:
    """The user whose API token ``token`` is (detached, the session's read ended); the 401 saying why
    not otherwise."""
    # End the read now: the connection goes back to the pool while the route waits on other
    # services (else a burst of requests holds every pooled connection through their upstream calls).
    # The user is detached first, with what was read: a rollback expires the session's objects, and
    # the route's first look at an expired one would check a connection out again, for the rest of
    # the request. An unknown, revoked or expired token is a 401 saying which (tokens.refusal).
    try:
        user = user_for_token(session, token)
        session.expunge(user)
    finally:
        session.rollback()
    return user


CurrentUser = Annotated[User, Depends(current_user)]


def admin_user(user: CurrentUser) -> User:
    if not user.is_admin:
        raise ApiError(403, "FORBIDDEN", "this endpoint is for administrators")
    return user


AdminUser = Annotated[User, Depends(admin_user)]


def user_named(session: Session, username: str) -> User:
    """The user ``username`` (404 USER_NOT_FOUND), read and detached: no connection is held while an
    internal service answers afterwards."""
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise ApiError(404, "USER_NOT_FOUND", f"no user {username!r}", {"username": username})
    session.expunge(user)
    session.rollback()
    return user


def get_catalog(request: Request) -> Catalog:
    return request.app.state.catalog


CatalogDep = Annotated[Catalog, Depends(get_catalog)]


def orchestrator_client(settings: SettingsDep, user: CurrentUser) -> Iterator[ServiceClient]:
    with service_client(settings, "orchestrator", user) as client:
        yield client


OrchestratorDep = Annotated[ServiceClient, Depends(orchestrator_client)]


def timeseries_client(settings: SettingsDep) -> Iterator[TimeSeriesClient]:
    client = TimeSeriesClient(settings.metrics_url, settings.metrics_token)
    try:
        yield client
    finally:
        client.close()


TimeSeriesDep = Annotated[TimeSeriesClient, Depends(timeseries_client)]
