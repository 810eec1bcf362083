"""a member a resize removes may be drained first (members.drain_state, drain_since); and one schema
whatever form of 0007 a database got: 0007 changed while unlanded (an early form had clusters.keep_as and
a live-name index without KEEPING), and a migration that ran somewhere is never edited again, so this one
converges them (IF [NOT] EXISTS throughout)

Revision ID: 0008
Revises: 0007
"""
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.execute(f"ALTER TABLE {S}.members ADD COLUMN IF NOT EXISTS drain_state VARCHAR(16)")
    op.execute(f"ALTER TABLE {S}.members ADD COLUMN IF NOT EXISTS drain_since TIMESTAMP WITHOUT TIME ZONE")
    op.execute(f"ALTER TABLE {S}.clusters DROP COLUMN IF EXISTS keep_as")
    op.execute(f"DROP INDEX IF EXISTS {S}.uq_datasets_owner_name_live")
    op.execute(f"CREATE UNIQUE INDEX uq_datasets_owner_name_live ON {S}.datasets (owner_id, name) "
               "WHERE state IN ('KEEPING', 'KEPT', 'ATTACHED')")


def downgrade() -> None:
    op.execute(f"ALTER TABLE {S}.members DROP COLUMN IF EXISTS drain_since")
    op.execute(f"ALTER TABLE {S}.members DROP COLUMN IF EXISTS drain_state")
