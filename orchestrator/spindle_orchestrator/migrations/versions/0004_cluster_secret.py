"""clusters.secret: the data-plane secret given to a cluster's members and jobs' drivers

Revision ID: 0004
Revises: 0003
"""
import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    # NULL for clusters created before: the orchestrator gives them one at their next launch.
    op.add_column("clusters", sa.Column("secret", sa.String(128), nullable=True), schema=S)


def downgrade() -> None:
    op.drop_column("clusters", "secret", schema=S)
