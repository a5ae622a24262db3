"""PostgreSQL search backend: the windows of long chunks (pgvector), beside each chunk's own vector

A no-op on SQLite, and on PostgreSQL where the search tables were never created (migration 0010 left them out
without pgvector; the first ingest on the ``postgres`` backend creates all of them, this one included).
Generations indexed before have no windows: their chunks rank by their own vectors until a later ingest writes
the windows of the chunks it finds without them.

Revision ID: 0012_search_windows
Revises: 0011_file_chunking
"""
from typing import Sequence, Union

from alembic import op
from sqlalchemy import text

revision: str = "0012_search_windows"
down_revision: Union[str, None] = "0011_file_chunking"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    if bind.execute(text("SELECT to_regclass('search_vectors') IS NOT NULL")).scalar():
        from sift.db.search_schema import create_windows_table

        create_windows_table(bind)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    bind.execute(text("DROP TABLE IF EXISTS search_windows CASCADE"))
