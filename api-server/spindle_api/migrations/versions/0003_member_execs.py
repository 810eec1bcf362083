"""member_execs: every command run in a member, who ran it and how it ended

Revision ID: 0003
Revises: 0002
"""
import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "member_execs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("started_at", sa.DateTime, nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("cluster_id", sa.String(128), nullable=False),
        sa.Column("cluster_owner", sa.String(64), nullable=False),
        sa.Column("member_id", sa.String(256), nullable=False),
        sa.Column("argv", sa.JSON, nullable=False),
        sa.Column("finished_at", sa.DateTime, nullable=True),
        sa.Column("exit_code", sa.Integer, nullable=True),
        sa.Column("timed_out", sa.Boolean, nullable=False),
        sa.Column("error", sa.String(64), nullable=True),
        schema="api",
    )
    for column in ("username", "cluster_id", "cluster_owner"):
        op.create_index(f"ix_member_execs_{column}", "member_execs", [column], schema="api")


def downgrade() -> None:
    op.drop_table("member_execs", schema="api")
