"""PostgreSQL search backend: BM25 postings and statistics, chunk vectors (pgvector)

A no-op on SQLite. On PostgreSQL the tables are created only when the pgvector extension is available; without it
the migration leaves them out (the default ``local`` backend does not use them) and the first ingest on the
``postgres`` backend creates them or says that pgvector is missing (``sift.db.search_schema``).

Revision ID: 0010_pg_search
Revises: 0009_chunk_identity
"""
from typing import Sequence, Union

from alembic import op

revision: str = "0010_pg_search"
down_revision: Union[str, None] = "0009_chunk_identity"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    from sift.db.search_schema import create_search_schema, pgvector_available

    if pgvector_available(bind):
        create_search_schema(bind)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    from sift.db.search_schema import drop_search_schema

    drop_search_schema(bind)
