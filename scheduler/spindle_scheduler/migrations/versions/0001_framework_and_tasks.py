"""framework id and member tasks

Revision ID: 0001
Revises:
"""
import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "framework",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("framework_id", sa.String(128), nullable=False),
        schema="scheduler",
    )
    op.create_table(
        "tasks",
        sa.Column("task_id", sa.String(128), primary_key=True),
        sa.Column("cluster_id", sa.String(64), nullable=False),
        sa.Column("member_id", sa.String(128), nullable=False),
        sa.Column("request", sa.JSON, nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("message", sa.String(2000), nullable=False),
        sa.Column("hostname", sa.String(255)),
        sa.Column("agent_id", sa.String(128)),
        sa.Column("disk_roots", sa.JSON, nullable=False),
        sa.Column("ip", sa.String(64)),
        sa.Column("kill_requested", sa.Boolean, nullable=False),
        sa.Column("updated_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.UniqueConstraint("member_id", name="uq_tasks_member_id"),
        schema="scheduler",
    )
    op.create_index("ix_tasks_cluster_id", "tasks", ["cluster_id"], schema="scheduler")
    op.create_index("ix_tasks_state", "tasks", ["state"], schema="scheduler")


def downgrade() -> None:
    op.drop_table("tasks", schema="scheduler")
    op.drop_table("framework", schema="scheduler")
