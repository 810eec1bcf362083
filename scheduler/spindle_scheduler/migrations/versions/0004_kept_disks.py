"""tasks can keep their disks across their end (a stopped cluster's members)

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("keep_disks", sa.Boolean, nullable=False, server_default=sa.false()),
                  schema="scheduler")


def downgrade() -> None:
    op.drop_column("tasks", "keep_disks", schema="scheduler")
