"""clusters, members and their event timeline

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.create_table(
        "clusters",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("product", sa.String(64), nullable=False),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason_code", sa.String(64)),
        sa.Column("reason", sa.String(2000)),
        sa.Column("idempotency_key", sa.String(128)),
        sa.Column("deadline", sa.DateTime),
        sa.Column("cleaned_up", sa.Boolean, nullable=False),
        sa.Column("delete_requested", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint("owner", "idempotency_key", name="uq_clusters_owner_idempotency_key"),
        schema=S,
    )
    op.create_index("ix_clusters_owner", "clusters", ["owner"], schema=S)
    op.create_index("ix_clusters_state", "clusters", ["state"], schema=S)
    op.create_table(
        "members",
        sa.Column("member_id", sa.String(128), primary_key=True),
        sa.Column("cluster_id", sa.String(32), sa.ForeignKey(f"{S}.clusters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("role", sa.String(64), nullable=False),
        sa.Column("index", sa.Integer, nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("message", sa.String(2000), nullable=False),
        sa.Column("node", sa.String(255)),
        sa.Column("ip", sa.String(64)),
        sa.Column("dns_name", sa.String(255)),
        sa.Column("disks", sa.JSON, nullable=False),
        sa.Column("ports", sa.JSON, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        schema=S,
    )
    op.create_index("ix_members_cluster_id", "members", ["cluster_id"], schema=S)
    op.create_table(
        "events",
        sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=True),
        sa.Column("cluster_id", sa.String(32), sa.ForeignKey(f"{S}.clusters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("member_id", sa.String(128)),
        sa.Column("step", sa.String(32), nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("message", sa.String(2000), nullable=False),
        sa.Column("at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        schema=S,
    )
    op.create_index("ix_events_cluster_id", "events", ["cluster_id"], schema=S)


def downgrade() -> None:
    op.drop_table("events", schema=S)
    op.drop_table("members", schema=S)
    op.drop_table("clusters", schema=S)
