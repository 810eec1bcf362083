"""what a cluster's owner should know that its state does not say (clusters.notices), e.g. that a
cluster it was bound to was deleted with force

Revision ID: 0010
Revises: 0009
"""
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {S}.clusters ADD COLUMN IF NOT EXISTS notices JSON NOT NULL DEFAULT '[]'")


def downgrade() -> None:
    op.execute(f"ALTER TABLE {S}.clusters DROP COLUMN IF EXISTS notices")
