"""refs: a call of a name the calling function binds itself (a parameter, a loop variable) is marked

Revision ID: 0013_ref_bound_locally
Revises: 0012_search_windows

Existing refs are marked false, as they were read before. The chunker's version went up with this change
(``sift.ingest.chunk.CHUNKING`` 7), so the next ingest parses every file again and marks its calls.
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0013_ref_bound_locally"
down_revision: Union[str, None] = "0012_search_windows"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("refs", sa.Column("bound_locally", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("refs") as batch:
        batch.drop_column("bound_locally")
