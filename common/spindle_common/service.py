"""The skeleton every Spindle service shares: app factory with /health, start-up checks,
Consul registration, and the process entry point."""
import logging
import socket
import sys
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from typing import Any, TypeVar

import uvicorn
from fastapi import APIRouter, FastAPI
from prometheus_client.registry import Collector
from sqlalchemy import text

from spindle_common import db
from spindle_common.consul import ConsulClient
from spindle_common.errors import ApiError, install_error_handlers
from spindle_common.metrics import install_metrics
from spindle_common.settings import ServiceSettings

log = logging.getLogger("spindle")

# A service's own settings class: run_service hands build_app the settings object it was given.
SettingsT = TypeVar("SettingsT", bound=ServiceSettings)


class DependencyUnavailable(Exception):
    """A dependency the service cannot start without is missing; the message is one line."""


def check_dependencies(settings: ServiceSettings) -> None:
    """Fail fast, naming what is missing, before the service starts listening."""
    try:
        db.ping(settings.database_url, settings.dependency_timeout)
    except Exception as exc:  # the driver's own exception types vary; the message is what matters
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DependencyUnavailable(
            f"cannot reach PostgreSQL at {db.describe(settings.database_url)}: {reason}"
        ) from exc
    consul = ConsulClient(settings.consul_url, timeout=settings.dependency_timeout)
    try:
        consul.leader()
    except Exception as exc:
        raise DependencyUnavailable(f"cannot reach Consul at {settings.consul_url}: {exc}") from exc
    finally:
        consul.close()


def service_id(settings: ServiceSettings) -> str:
    return f"{settings.service_name}-{settings.advertise_host}-{settings.port}"


def create_service_app(
    settings: ServiceSettings,
    routers: Iterable[APIRouter] = (),
    description: str = "",
    register_in_consul: bool = True,
    background: Callable[[FastAPI], AbstractContextManager] | None = None,
    collectors: Iterable[Collector] = (),
) -> FastAPI:
    """Build a service's FastAPI app with the shared error envelope, /health, /metrics (its requests
    and ``collectors``, ``spindle_common.metrics``) and Consul lifecycle.

    ``background(app)``, if given, is entered after start-up and left at shutdown (e.g. a worker thread).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        consul = ConsulClient(settings.consul_url)
        if register_in_consul:
            consul.register_service(
                name=settings.service_name,
                service_id=service_id(settings),
                address=settings.advertise_host,
                port=settings.port,
                check=consul.http_check(f"http://{settings.advertise_host}:{settings.port}/health"),
                tags=["spindle"],
            )
        try:
            with background(app) if background else nullcontext():
                yield
        finally:
            if register_in_consul:
                try:
                    consul.deregister_service(service_id(settings))
                except Exception as exc:  # Consul may already be gone during `down`
                    log.warning("could not deregister %s: %s", service_id(settings), exc)
            consul.close()

    app = FastAPI(title=f"Spindle {settings.service_name}", description=description, lifespan=lifespan)
    app.state.settings = settings  # dependencies read the serving app's settings from here
    install_error_handlers(app)
    install_metrics(app, settings.service_name, settings.metrics_token, collectors)

    @app.get("/health", tags=["health"])
    def health() -> dict:
        """Healthy when the service answers and its database does."""
        try:
            with db.get_engine(settings.database_url).connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception as exc:
            raise ApiError(503, "DATABASE_UNAVAILABLE", f"PostgreSQL is unreachable: {type(exc).__name__}") from exc
        return {"status": "ok", "service": settings.service_name, "checks": {"database": "ok"}}

    for router in routers:
        app.include_router(router)
    return app


def run_service(settings: SettingsT, build_app: Callable[[SettingsT], FastAPI]) -> None:
    """Process entry point: check dependencies (one-line error and exit 1 if missing), then serve."""
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        check_dependencies(settings)
    except DependencyUnavailable as exc:
        print(f"{settings.service_name}: {exc}", file=sys.stderr)
        sys.exit(1)
    serve(build_app(settings), [settings.host, *split_hosts(settings.extra_hosts)], settings.port,
          log_level=settings.log_level)


def split_hosts(hosts: str) -> list[str]:
    return [h.strip() for h in hosts.split(",") if h.strip()]


def serve(app: Any, hosts: list[str], port: int, **config: Any) -> None:
    """uvicorn on ``port`` of every address in ``hosts`` (one listening socket each, one server)."""
    hosts = list(dict.fromkeys(hosts))
    if len(hosts) == 1:
        uvicorn.run(app, host=hosts[0], port=port, **config)
        return
    sockets = []
    for host in hosts:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sockets.append(sock)
    uvicorn.Server(uvicorn.Config(app, port=port, **config)).run(sockets=sockets)
