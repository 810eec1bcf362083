"""stop/start and datasets: a cluster can be stopped (keeping its disks and IPs) and deleted keeping
its members' disks as a dataset of its owner, which a later launch of the product attaches

Revision ID: 0007
Revises: 0006
"""
import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.add_column("clusters", sa.Column("stop_requested", sa.Boolean, nullable=False, server_default=sa.false()),
                  schema=S)
    op.add_column("clusters", sa.Column("keep_disks", sa.Boolean, nullable=False, server_default=sa.false()),
                  schema=S)
    op.add_column("clusters", sa.Column("dataset_id", sa.String(32), nullable=True), schema=S)
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("owner_id", sa.String(64), nullable=False, index=True),
        sa.Column("product", sa.String(64), nullable=False),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("source_cluster", sa.String(32), nullable=False),
        sa.Column("state", sa.String(16), nullable=False, index=True),
        sa.Column("attached_to", sa.String(32), nullable=True),
        sa.Column("members", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        schema=S,
    )
    # A name means one dataset of its owner while it holds disks (kept, being kept, or attached).
    op.create_index("uq_datasets_owner_name_live", "datasets", ["owner_id", "name"], unique=True, schema=S,
                    postgresql_where=sa.text("state IN ('KEEPING', 'KEPT', 'ATTACHED')"))


def downgrade() -> None:
    op.drop_table("datasets", schema=S)
    for column in ("dataset_id", "keep_disks", "stop_requested"):
        op.drop_column("clusters", column, schema=S)
