"""generations: index paths relative to the index root, so a moved or copied data directory reads its own indexes

Revision ID: 0014_relative_index_paths
Revises: 0013_ref_bound_locally

Every index directory is ``<index root>/kb<id>/g<number>``; an absolute path of that shape becomes ``kb<id>/g<number>``
and is resolved against the index root of whoever reads it. Paths of any other shape are left as they are.
Downgrading keeps the relative paths (the older code cannot resolve them; ingest again after a downgrade).
"""
import re
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0014_relative_index_paths"
down_revision: Union[str, None] = "0013_ref_bound_locally"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TAIL = re.compile(r"(?:^|[/\\])(kb\d+)[/\\](g\d+)[/\\]?$")


def upgrade() -> None:
    generations = sa.table("generations", sa.column("id", sa.Integer), sa.column("index_path", sa.Text))
    conn = op.get_bind()
    rows = conn.execute(sa.select(generations.c.id, generations.c.index_path)
                        .where(generations.c.index_path.is_not(None))).all()
    for row in rows:
        match = _TAIL.search(row.index_path)
        absolute = row.index_path.startswith("/") or re.match(r"^[A-Za-z]:[/\\]", row.index_path)
        if match and absolute:
            conn.execute(sa.update(generations).where(generations.c.id == row.id)
                         .values(index_path=f"{match.group(1)}/{match.group(2)}"))


def downgrade() -> None:
    pass
