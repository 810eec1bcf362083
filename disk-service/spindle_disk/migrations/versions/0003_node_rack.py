"""nodes.rack: the node's failure domain as an admin sets it (NULL: the node itself)

Revision ID: 0003
Revises: 0002
"""
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
S = "disk"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {S}.nodes ADD COLUMN IF NOT EXISTS rack VARCHAR(63)")


def downgrade() -> None:
    op.execute(f"ALTER TABLE {S}.nodes DROP COLUMN IF EXISTS rack")
