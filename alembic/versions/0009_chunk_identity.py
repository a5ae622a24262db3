"""chunk identity: symbol, part number and module-code flag as columns, not parsed from the display name

Revision ID: 0009_chunk_identity
Revises: 0008_tenant_roots

Existing chunks are backfilled from their names, which until now were the only record of these facts:
``Schema.load (part 2)`` → (``Schema.load``, 2, false), ``fields.py (module code) (part 1)`` → (``fields.py``, 1,
true). Only function chunks ever carried those suffixes; every other chunk's name is its symbol. Unchanged
files are never re-chunked, so without the backfill an old database would keep serving empty symbols.
"""
import re
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0009_chunk_identity"
down_revision: Union[str, None] = "0008_tenant_roots"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_SUFFIXES = re.compile(r"^(?P<symbol>.*?)(?P<module> \(module code\))?(?: \(part (?P<part>\d+)\))?$", re.S)
_BATCH = 1000

chunks = sa.table(
    "chunks", sa.column("id", sa.Integer), sa.column("kind", sa.String), sa.column("name", sa.Text),
    sa.column("symbol", sa.Text), sa.column("part", sa.Integer), sa.column("module_code", sa.Boolean),
)


def upgrade() -> None:
    op.add_column("chunks", sa.Column("symbol", sa.Text(), nullable=False, server_default=""))
    op.add_column("chunks", sa.Column("part", sa.Integer(), nullable=True))
    op.add_column("chunks", sa.Column("module_code", sa.Boolean(), nullable=False, server_default=sa.false()))
    conn = op.get_bind()
    conn.execute(chunks.update().values(symbol=chunks.c.name))
    rows = conn.execute(
        sa.select(chunks.c.id, chunks.c.name).where(chunks.c.kind == "function", chunks.c.name.like("% (%)"))
    ).all()
    updates = []
    for row in rows:
        m = _SUFFIXES.match(row.name)
        if m and (m["module"] or m["part"]):
            updates.append({"cid": row.id, "s": m["symbol"], "p": int(m["part"]) if m["part"] else None,
                            "m": bool(m["module"])})
    stmt = (chunks.update().where(chunks.c.id == sa.bindparam("cid"))
            .values(symbol=sa.bindparam("s"), part=sa.bindparam("p"), module_code=sa.bindparam("m")))
    for i in range(0, len(updates), _BATCH):
        conn.execute(stmt, updates[i : i + _BATCH])


def downgrade() -> None:
    with op.batch_alter_table("chunks") as batch:
        batch.drop_column("module_code")
        batch.drop_column("part")
        batch.drop_column("symbol")
