"""members a resize drained and removed stay known to their cluster (clusters.retired) until their IP
is a member's again, so a drained HDFS DataNode stays in the NameNode's exclude file

Revision ID: 0009
Revises: 0008
"""
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {S}.clusters ADD COLUMN IF NOT EXISTS retired JSON NOT NULL DEFAULT '[]'")


def downgrade() -> None:
    op.execute(f"ALTER TABLE {S}.clusters DROP COLUMN IF EXISTS retired")
