"""ingest jobs: the process that runs them (host, pid, start time); ids never reused (SQLite AUTOINCREMENT)

Revision ID: 0007_job_process
Revises: 0006_client_thread_ids
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0007_job_process"
down_revision: Union[str, None] = "0006_client_thread_ids"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    # SQLite hands out max(id) + 1, so a deleted kb's last job id came back for the next job; AUTOINCREMENT
    # (a table option, hence the copy) never reuses one. PostgreSQL sequences never did.
    with op.batch_alter_table("ingest_jobs", recreate="always",
                              table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.add_column(sa.Column("host", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("pid", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pid_started", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ingest_jobs", recreate="always") as batch:
        batch.drop_column("pid_started")
        batch.drop_column("pid")
        batch.drop_column("host")
