"""quotas: per-user limits, and what each cluster counts against its owner's

Revision ID: 0006
Revises: 0005
"""
import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.create_table(
        "quotas",
        sa.Column("owner", sa.String(64), primary_key=True),
        sa.Column("clusters", sa.Integer),
        sa.Column("cpus", sa.Float),
        sa.Column("mem_mb", sa.Integer),
        sa.Column("disks", sa.JSON),
        sa.Column("floating_ips", sa.Integer),
        sa.Column("updated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        schema=S,
    )
    # NULL for clusters created before: their demand is worked out from the catalog when counted.
    op.add_column("clusters", sa.Column("demand", sa.JSON, nullable=True), schema=S)


def downgrade() -> None:
    op.drop_column("clusters", "demand", schema=S)
    op.drop_table("quotas", schema=S)
