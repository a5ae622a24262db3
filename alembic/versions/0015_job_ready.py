"""ingest_jobs.ready: how far a job's knowledge base can be searched (searchable, then complete)

Revision ID: 0015_job_ready
Revises: 0014_relative_index_paths

An ingest publishes its keyword index before it embeds; the job says ``searchable`` then, and ``complete`` once
the vectors are published. Jobs that succeeded before this column existed published everything at once.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_job_ready"
down_revision: str | None = "0014_relative_index_paths"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("ingest_jobs")}
    if "ready" not in columns:  # a database stamped back to an older revision may have it already
        op.add_column("ingest_jobs", sa.Column("ready", sa.String(20), nullable=True))
    op.execute("UPDATE ingest_jobs SET ready = 'complete' WHERE status = 'succeeded' AND ready IS NULL")


def downgrade() -> None:
    with op.batch_alter_table("ingest_jobs") as batch:
        batch.drop_column("ready")
