"""tasks keep their held disks' details and how often their member was launched

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("disks", sa.JSON, nullable=False, server_default="[]"), schema="scheduler")
    op.add_column("tasks", sa.Column("launches", sa.Integer, nullable=False, server_default="1"), schema="scheduler")


def downgrade() -> None:
    op.drop_column("tasks", "launches", schema="scheduler")
    op.drop_column("tasks", "disks", schema="scheduler")
