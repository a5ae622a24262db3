"""generation leases: which replica last used which generation, for grace-period garbage collection

Revision ID: 0005_generation_leases
Revises: 0004_llm_parse_cache
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0005_generation_leases"
down_revision: Union[str, None] = "0004_llm_parse_cache"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "generation_leases",
        sa.Column("kb_id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("replica", sa.String(length=200), nullable=False),
        sa.Column("last_used_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("kb_id", "generation", "replica"),
    )


def downgrade() -> None:
    op.drop_table("generation_leases")
