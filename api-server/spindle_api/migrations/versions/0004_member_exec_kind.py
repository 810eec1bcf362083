"""member_execs.kind: a command ("exec") or an interactive terminal session ("terminal")

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
    # Every record from before is a command (spindle exec).
    op.add_column("member_execs", sa.Column("kind", sa.String(16), nullable=False, server_default="exec"),
                  schema="api")


def downgrade() -> None:
    op.drop_column("member_execs", "kind", schema="api")
