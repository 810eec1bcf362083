"""Alembic, driven from code: each service keeps its revisions in ``<package>/migrations`` and owns
one PostgreSQL schema, with its version table inside it.

Usage: ``python -m spindle_common.migrations <package> upgrade|downgrade [revision]``.
"""
import argparse
import importlib
import os
from pathlib import Path

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, create_engine, pool, text


def alembic_config(package: str, database_url: str) -> Config:
    """An Alembic config pointing at ``package``'s migrations folder."""
    module = importlib.import_module(package)
    if module.__file__ is None:  # a namespace package: no folder to find the migrations in
        raise ValueError(f"{package} is not a regular package (no __file__), so it has no migrations folder")
    config = Config()
    config.set_main_option("script_location", str(Path(module.__file__).parent / "migrations"))
    config.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return config


def upgrade(package: str, database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(package, database_url), revision)


def downgrade(package: str, database_url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(package, database_url), revision)


def run_migrations(target_metadata: MetaData) -> None:
    """Body of every service's ``env.py``: online migrations inside the service's own schema."""
    schema = target_metadata.schema
    url = context.config.get_main_option("sqlalchemy.url")
    if url is None:  # alembic_config always sets it; an env.py run some other way may not
        raise ValueError("the Alembic config has no sqlalchemy.url")
    engine = create_engine(url, poolclass=pool.NullPool)
    with engine.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
        connection.commit()
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            version_table_schema=schema,
            include_schemas=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("package", help="service package, e.g. spindle_disk")
    parser.add_argument("action", choices=["upgrade", "downgrade"])
    parser.add_argument("revision", nargs="?")
    args = parser.parse_args()
    url = os.environ["SPINDLE_DATABASE_URL"]
    if args.action == "upgrade":
        upgrade(args.package, url, args.revision or "head")
    else:
        downgrade(args.package, url, args.revision or "base")


if __name__ == "__main__":
    main()
