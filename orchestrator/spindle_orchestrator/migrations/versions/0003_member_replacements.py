"""members.replacements: how often a member was launched again after dying

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.add_column("members", sa.Column("replacements", sa.Integer, nullable=False, server_default="0"), schema=S)


def downgrade() -> None:
    op.drop_column("members", "replacements", schema=S)
