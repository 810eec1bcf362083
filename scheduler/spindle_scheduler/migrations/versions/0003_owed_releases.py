"""tasks record the release they owe (container, disks) in the transaction that ends them

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Tasks that ended before this revision owe nothing here: the sweep finds any disk they still hold.
    op.add_column("tasks", sa.Column("release_owed", sa.Boolean, nullable=False, server_default=sa.false()),
                  schema="scheduler")
    op.add_column("tasks", sa.Column("release_attempts", sa.Integer, nullable=False, server_default="0"),
                  schema="scheduler")
    op.add_column("tasks", sa.Column("release_error", sa.String(2000), nullable=False, server_default=""),
                  schema="scheduler")
    op.add_column("tasks", sa.Column("released_at", sa.DateTime), schema="scheduler")
    op.create_index("ix_tasks_release_owed", "tasks", ["release_owed"], schema="scheduler",
                    postgresql_where=sa.text("release_owed"))


def downgrade() -> None:
    op.drop_index("ix_tasks_release_owed", "tasks", schema="scheduler")
    for column in ("released_at", "release_error", "release_attempts", "release_owed"):
        op.drop_column("tasks", column, schema="scheduler")
