"""jobs: driver programs run against a running cluster

Revision ID: 0002
Revises: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("cluster_id", sa.String(32), sa.ForeignKey(f"{S}.clusters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("main", sa.String(255), nullable=False),
        sa.Column("args", sa.JSON, nullable=False),
        sa.Column("files", sa.JSON, nullable=False),
        sa.Column("message", sa.String(2000), nullable=False),
        sa.Column("exit_code", sa.Integer),
        sa.Column("stdout", sa.Text, nullable=False),
        sa.Column("stderr", sa.Text, nullable=False),
        sa.Column("container", sa.String(128)),
        sa.Column("ip", sa.String(64)),
        sa.Column("created_at", sa.DateTime, server_default=sa.func.now(), nullable=False),
        sa.Column("started_at", sa.DateTime),
        sa.Column("finished_at", sa.DateTime),
        schema=S,
    )
    op.create_index("ix_jobs_cluster_id", "jobs", ["cluster_id"], schema=S)
    op.create_index("ix_jobs_state", "jobs", ["state"], schema=S)


def downgrade() -> None:
    op.drop_table("jobs", schema=S)
