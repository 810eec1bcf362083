"""Every service's Alembic history applies to an empty database and reverses cleanly."""
from sqlalchemy import create_engine, inspect

from spindle_common import migrations

PACKAGES = {"spindle_api": "api", "spindle_orchestrator": "orchestrator", "spindle_scheduler": "scheduler",
            "spindle_disk": "disk", "spindle_network": "network"}


def tables(url: str, schema: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names(schema=schema)) - {"alembic_version"}
    finally:
        engine.dispose()


def test_migrations_apply_from_empty_and_are_reversible(fresh_database):
    for package in PACKAGES:
        migrations.upgrade(package, fresh_database)
    after_upgrade = {schema: tables(fresh_database, schema) for schema in PACKAGES.values()}
    assert {"users", "api_tokens"} <= after_upgrade["api"]

    for package, schema in PACKAGES.items():
        migrations.downgrade(package, fresh_database)
        assert tables(fresh_database, schema) == set(), f"{package} left tables after downgrade"

    # And forward again: the downgrade left nothing that blocks a re-upgrade.
    for package, schema in PACKAGES.items():
        migrations.upgrade(package, fresh_database)
        assert tables(fresh_database, schema) == after_upgrade[schema]
