"""IP pools (no overlaps) and floating IPs (one row per address)

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import CIDR, INET

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None
S = "network"


def upgrade() -> None:
    op.create_table(
        "pools",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("cidr", CIDR, nullable=False),
        sa.Column("gateway", INET, nullable=False),
        sa.Column("floating_cidr", CIDR, nullable=False),
        sa.Column("auto_cidr", CIDR, nullable=False),
        sa.Column("driver", sa.String(16), nullable=False),
        sa.Column("parent", sa.String(64)),
        sa.Column("docker_network", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint("name", name="uq_pools_name"),
        schema=S,
    )
    op.execute(f"ALTER TABLE {S}.pools ADD CONSTRAINT ex_pools_cidr_overlap EXCLUDE USING gist (cidr inet_ops WITH &&)")
    op.create_table(
        "floating_ips",
        sa.Column("address", INET, primary_key=True),
        sa.Column("pool_id", sa.Integer, sa.ForeignKey(f"{S}.pools.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner", sa.String(255)),
        sa.Column("container", sa.String(128)),
        sa.Column("dns_service", sa.String(64)),
        sa.Column("dns_name", sa.String(64)),
        sa.Column("allocated_at", sa.DateTime),
        sa.UniqueConstraint("pool_id", "owner", name="uq_floating_ips_pool_owner"),
        schema=S,
    )
    op.create_index("ix_floating_ips_pool_id", "floating_ips", ["pool_id"], schema=S)


def downgrade() -> None:
    op.drop_table("floating_ips", schema=S)
    op.drop_table("pools", schema=S)
