"""file chunking version: files remember which version of the chunker cut them

Revision ID: 0011_file_chunking
Revises: 0010_pg_search

Existing files were cut by version 1. An ingest chunks a file again when its version differs from the
chunker's (``sift.ingest.chunk.CHUNKING``), even if its content is unchanged, so an upgrade that changes chunk
boundaries reaches every knowledge base at its next ingest.
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0011_file_chunking"
down_revision: Union[str, None] = "0010_pg_search"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("files", sa.Column("chunking", sa.Integer(), nullable=False, server_default="1"))


def downgrade() -> None:
    op.drop_column("files", "chunking")
