"""Database access: engine factory (SQLite in WAL mode by default), migrations, generation visibility."""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import Engine, and_, create_engine, event, or_
from sqlalchemy.engine import make_url
from sqlalchemy.sql.elements import ColumnElement

from sift.config import Settings
from sift.db import tables

log = logging.getLogger(__name__)

ALEMBIC_DIR = Path(__file__).resolve().parents[2] / "alembic"


def _sqlite_pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def make_engine(url: str) -> Engine:
    """Create an engine; SQLite gets WAL, foreign keys and a busy timeout, and its directory is created."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)


def upgrade(url: str) -> None:
    """Bring the database at ``url`` to the newest Alembic revision (a no-op when it is there already)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "head")


def open_database(settings: Settings) -> Engine:
    """Migrate the configured database to head and return an engine for it."""
    url = settings.resolved_database_url()
    engine = make_engine(url)
    if not _at_head(engine):
        upgrade(url)
    return engine


def _at_head(engine: Engine) -> bool:
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(ALEMBIC_DIR))
    heads = set(ScriptDirectory.from_config(cfg).get_heads())
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current == heads


def visible_in(file_table: type[tables.File] | object, generation: int) -> ColumnElement[bool]:
    """SQL condition: the file version row is part of ``generation``."""
    f = file_table
    return and_(f.gen_from <= generation, or_(f.gen_to.is_(None), f.gen_to > generation))  # type: ignore[attr-defined]
