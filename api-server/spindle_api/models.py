"""Tables owned by api-server, all in the PostgreSQL schema ``api``."""
from datetime import datetime

from sqlalchemy import JSON, ForeignKey, String, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from spindle_common.db import service_metadata


class Base(DeclarativeBase):
    metadata = service_metadata("api")


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())


class ApiToken(Base):
    """An API token; only its SHA-256 is stored (tokens are 256-bit random, so no slow hash is needed).
    It works until ``expires_at`` (UTC), or until revoked."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # First characters of the token, so a user can tell their tokens apart.
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    expires_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class MemberExec(Base):
    """A command a user ran in a member (``spindle exec``, kind ``exec``) or a terminal session they
    opened in it (kind ``terminal``, argv ``["<terminal>"]``): recorded before it runs, completed when
    its output ends. ``exit_code`` stays null when it never ran or its end was not seen (``error``
    says why)."""

    __tablename__ = "member_execs"

    id: Mapped[int] = mapped_column(primary_key=True)
    started_at: Mapped[datetime]
    # Who ran it (the caller: the owner, or an admin) and in whose cluster; names, kept as they were.
    username: Mapped[str] = mapped_column(String(64), index=True)
    cluster_id: Mapped[str] = mapped_column(String(128), index=True)
    cluster_owner: Mapped[str] = mapped_column(String(64), index=True)
    member_id: Mapped[str] = mapped_column(String(256))
    argv: Mapped[list[str]] = mapped_column(JSON)
    kind: Mapped[str] = mapped_column(String(16), default="exec", server_default="exec")
    finished_at: Mapped[datetime | None]
    exit_code: Mapped[int | None]
    timed_out: Mapped[bool] = mapped_column(default=False)
    error: Mapped[str | None] = mapped_column(String(64))
