"""nodes, disks, exclusive allocations, disk transition audit log

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "nodes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(253), nullable=False),
        sa.Column("address", sa.String(255), nullable=False),
        sa.Column("disk_root", sa.String(4096), nullable=False),
        sa.Column("cpus", sa.Float, nullable=True),
        sa.Column("mem_mb", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint("name", name="uq_nodes_name"),
        schema="disk",
    )
    op.create_table(
        "disks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("node_id", sa.Integer, sa.ForeignKey("disk.nodes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("device_path", sa.String(4096), nullable=False),
        sa.Column("serial", sa.String(255), nullable=True),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("transport", sa.String(32), nullable=True),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("rotational", sa.Boolean, nullable=False),
        sa.Column("mount_point", sa.String(4096), nullable=False),
        sa.Column("fs_type", sa.String(32), nullable=True),
        sa.Column("fs_label", sa.String(64), nullable=True),
        sa.Column("disk_class", sa.String(8), nullable=False),
        sa.Column("labels", JSONB, server_default=sa.text("'{}'::jsonb"), nullable=False),
        sa.Column("state", sa.String(16), server_default="free", nullable=False),
        sa.Column("state_reason", sa.String(1024), nullable=True),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.Column("updated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.CheckConstraint("disk_class IN ('hdd', 'ssd', 'nvme')", name="ck_disks_disk_class"),
        sa.CheckConstraint("state IN ('free', 'allocated', 'wiping', 'failed', 'retired')",
                           name="ck_disks_state"),
        schema="disk",
    )
    op.create_index("uq_disks_node_mount_point", "disks", ["node_id", "mount_point"], unique=True, schema="disk")
    op.create_index("ix_disks_allocatable", "disks", ["node_id", "disk_class", "state"], schema="disk")
    op.create_table(
        "allocations",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("disk_id", sa.Integer, sa.ForeignKey("disk.disks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("allocated_by", sa.String(255), nullable=False),
        sa.Column("allocated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.Column("released_by", sa.String(255), nullable=True),
        sa.Column("released_at", sa.DateTime, nullable=True),
        schema="disk",
    )
    # Exclusivity lives in the database: one active allocation per disk, whatever the code does.
    op.create_index("uq_allocations_active_disk", "allocations", ["disk_id"], unique=True,
                    postgresql_where=sa.text("released_at IS NULL"), schema="disk")
    op.create_index("ix_allocations_active_owner", "allocations", ["owner"],
                    postgresql_where=sa.text("released_at IS NULL"), schema="disk")
    op.create_table(
        "disk_transitions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("disk_id", sa.Integer, sa.ForeignKey("disk.disks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("from_state", sa.String(16), nullable=True),
        sa.Column("to_state", sa.String(16), nullable=False),
        sa.Column("actor", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("reason", sa.String(1024), nullable=True),
        sa.Column("at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        schema="disk",
    )
    op.create_index("ix_disk_transitions_disk_id", "disk_transitions", ["disk_id"], schema="disk")


def downgrade() -> None:
    op.drop_table("disk_transitions", schema="disk")
    op.drop_table("allocations", schema="disk")
    op.drop_table("disks", schema="disk")
    op.drop_table("nodes", schema="disk")
