"""tenant roots: the server-side directories each tenant may ingest

Revision ID: 0008_tenant_roots
Revises: 0007_job_process
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0008_tenant_roots"
down_revision: Union[str, None] = "0007_job_process"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "tenant_roots",
        sa.Column("tenant", sa.String(length=200), nullable=False),
        sa.Column("root", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), server_default=sa.text("(CURRENT_TIMESTAMP)"), nullable=False),
        sa.PrimaryKeyConstraint("tenant", "root"),
    )


def downgrade() -> None:
    op.drop_table("tenant_roots")
