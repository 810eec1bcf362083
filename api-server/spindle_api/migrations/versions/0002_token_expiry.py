"""api_tokens.expires_at: every token expires

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
    op.add_column("api_tokens", sa.Column("expires_at", sa.DateTime, nullable=True), schema="api")
    # Tokens from before never expired: they get the default lifetime (30 days) from now.
    op.execute("UPDATE api.api_tokens SET expires_at = (now() AT TIME ZONE 'UTC') + interval '30 days'")
    op.alter_column("api_tokens", "expires_at", nullable=False, schema="api")


def downgrade() -> None:
    op.drop_column("api_tokens", "expires_at", schema="api")
