"""SQLAlchemy 2 engine and session for a service, and the start-up reachability check."""
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from sqlalchemy import Engine, MetaData, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


@lru_cache(maxsize=8)
def get_engine(url: str) -> Engine:
    """One pooled engine per database URL for the life of the process."""
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)


def session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(get_engine(url), expire_on_commit=False)


# A read that builds one answer from several statements (a row, then its children loaded by a second
# SELECT) sees one snapshot under this; READ COMMITTED gives each statement its own, so a commit between
# them shows a cluster in its old state with the members a resize just added.
SNAPSHOT = {"isolation_level": "REPEATABLE READ", "postgresql_readonly": True}


def session_scope(url: str, snapshot: bool = False) -> Iterator[Session]:
    """FastAPI dependency body: a session that is closed after the request; with ``snapshot`` its
    transaction is read-only and every statement in it sees the database as of its first."""
    with session_factory(url)() as session:
        if snapshot:
            session.connection(execution_options=SNAPSHOT)
        yield session


def describe(url: str) -> str:
    """The URL without its password, for error messages."""
    return make_url(url).render_as_string(hide_password=True)


def ping(url: str, timeout: float) -> None:
    """Raise if PostgreSQL at ``url`` does not answer ``SELECT 1`` within ``timeout`` seconds."""
    engine = create_engine(url, connect_args={"connect_timeout": max(1, int(timeout))}, poolclass=None)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    finally:
        engine.dispose()


NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def service_metadata(schema: str) -> MetaData:
    """Metadata for one service: its own PostgreSQL schema, stable constraint names."""
    return MetaData(schema=schema, naming_convention=NAMING_CONVENTION)


@contextmanager
def scratch_database(url: str, prefix: str = "spindle_scratch") -> Iterator[str]:
    """A new empty database next to ``url``'s (for tests and benchmarks); dropped on exit."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    scratch = make_url(url).set(database=name).render_as_string(hide_password=False)
    try:
        yield scratch
    finally:
        get_engine.cache_clear()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
