"""nodes.last_seen_at: when the node's agent last sent a heartbeat

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
    op.add_column("nodes", sa.Column("last_seen_at", sa.DateTime, nullable=True), schema="disk")


def downgrade() -> None:
    op.drop_column("nodes", "last_seen_at", schema="disk")
