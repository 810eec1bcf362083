"""clusters.owner_id: who owns a cluster is the user's stable id, not their (reusable) name

Revision ID: 0005
Revises: 0004
"""
import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None
S = "orchestrator"


def upgrade() -> None:
    op.add_column("clusters", sa.Column("owner_id", sa.String(64), nullable=True), schema=S)
    op.create_index("ix_clusters_owner_id", "clusters", ["owner_id"], schema=S)
    # A cluster from before goes to the user of its name only if that user existed when it was
    # created (a name deleted and re-created since belonged to someone else then); the others stay
    # NULL: nobody's but the admins'. The api-server's users share this database (schema "api").
    op.execute(sa.text(
        "DO $$ BEGIN IF to_regclass('api.users') IS NOT NULL THEN "
        "UPDATE orchestrator.clusters AS c SET owner_id = 'u' || u.id FROM api.users AS u "
        "WHERE u.username = c.owner AND c.created_at >= u.created_at; END IF; END $$"))
    op.drop_constraint("uq_clusters_owner_idempotency_key", "clusters", schema=S)
    op.create_unique_constraint("uq_clusters_owner_id_idempotency_key", "clusters", ["owner_id", "idempotency_key"],
                                schema=S)


def downgrade() -> None:
    op.drop_constraint("uq_clusters_owner_id_idempotency_key", "clusters", schema=S)
    op.create_unique_constraint("uq_clusters_owner_idempotency_key", "clusters", ["owner", "idempotency_key"],
                                schema=S)
    op.drop_index("ix_clusters_owner_id", "clusters", schema=S)
    op.drop_column("clusters", "owner_id", schema=S)
