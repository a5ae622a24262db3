"""Database access: engine factory (SQLite in WAL mode by default, or PostgreSQL), migrations, generation
visibility, and the few SQL pieces that are spelled differently on the two engines."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import re
import urllib.request
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, Integer, and_, create_engine, event, literal, or_, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import ConnectionPoolEntry
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.functions import FunctionElement

from sift.config import Settings
from sift.db import tables

log = logging.getLogger(__name__)



def migrations_dir() -> Path:
    """The Alembic script directory: the package data ``sift/migrations`` of an installed wheel, or the
    repository's ``alembic/`` folder for an editable install (found through the install's PEP 610 record)."""
    spec = importlib.util.find_spec("sift.migrations")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    for dist in importlib.metadata.distributions(name="sift"):  # a checkout's own sift.egg-info has no record
        info = json.loads(dist.read_text("direct_url.json") or "{}")
        if info.get("dir_info", {}).get("editable") and info.get("url", "").startswith("file://"):
            folder = Path(urllib.request.url2pathname(info["url"][len("file://"):])) / "alembic"
            if (folder / "env.py").is_file():
                return folder
    raise RuntimeError("sift's migrations are missing: reinstall sift")


def _sqlite_pragmas(dbapi_conn: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
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
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    command.upgrade(cfg, "head")


def open_database(settings: Settings) -> Engine:
    """Migrate the configured database to head and return an engine for it."""
    url = settings.resolved_database_url()
    engine = make_engine(url)
    if not _at_head(engine):
        upgrade(url)
    if is_postgres(engine):
        _check_collation(engine)
    return engine


def is_postgres(bind: Engine | Connection) -> bool:
    """True when ``bind`` talks to PostgreSQL (the other supported engine is SQLite)."""
    return bind.dialect.name == "postgresql"


def advisory_key(*parts: str) -> int:
    """A stable signed 64-bit key for PostgreSQL advisory locks, derived from ``parts``."""
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


#: Collations whose order is the byte order SQLite uses; DocQL's prefix ranges and result order depend on it.
BYTE_ORDER_COLLATIONS = ("C", "POSIX")


def _check_collation(engine: Engine) -> None:
    with engine.connect() as conn:
        collate, ctype = conn.execute(
            text("SELECT datcollate, datctype FROM pg_database WHERE datname = current_database()")
        ).one()
    if collate not in BYTE_ORDER_COLLATIONS or ctype not in BYTE_ORDER_COLLATIONS:
        log.warning(
            "database collation is %s/%s: create the sift database with LOCALE 'C' (ENCODING 'UTF8', "
            "TEMPLATE template0) so that ordering and case folding match SQLite's", collate, ctype,
        )


# ``revision = "0011_x"`` / ``down_revision: Union[str, None] = "0010_y"`` (or None, or a tuple when merging).
_REVISION_LINE = re.compile(r"^(revision|down_revision)\b[^=\n]*=\s*(.+?)\s*$", re.M)
_QUOTED = re.compile(r"""(["'])([^"'\n]+)\1""")


@functools.cache
def _script_heads(versions: Path) -> frozenset[str] | None:
    """The head revisions of the migration scripts, read from their ``revision`` / ``down_revision`` lines
    (once per process: the scripts ship with the package).

    Importing Alembic costs about 0.15 s of CPU, which every CLI command would pay just to learn that the
    database is current; reading a few lines costs milliseconds. The lines are read as text, not parsed with
    ``ast``: CPython before 3.11.9 keeps the ast module's recursion counter per interpreter, so two threads
    building ASTs at once fail with "AST constructor recursion depth mismatch" (gh-106905). None (ask
    Alembic) when a script sets them any other way.
    """
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in sorted(versions.glob("*.py")):
        found: dict[str, str] = {}
        for name, value in _REVISION_LINE.findall(script.read_text(encoding="utf-8")):
            found.setdefault(name, value)
        revision, down = found.get("revision"), found.get("down_revision")
        quoted = _QUOTED.fullmatch(revision or "")
        if quoted is None or down is None:
            return None
        revisions.add(quoted.group(2))
        if down != "None":
            named = [m.group(2) for m in _QUOTED.finditer(down)]
            if not named:
                return None
            parents.update(named)  # one parent, or a merge revision's tuple of them
    return frozenset(revisions - parents) or None


def _at_head(engine: Engine) -> bool:
    heads = _script_heads(migrations_dir() / "versions")
    if heads is not None:
        try:
            with engine.connect() as conn:
                current = {row[0] for row in conn.execute(text("SELECT version_num FROM alembic_version"))}
        except DBAPIError:  # no version table yet: a new database
            return False
        return current == heads
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    heads = frozenset(ScriptDirectory.from_config(cfg).get_heads())
    with engine.connect() as conn:
        current = set(MigrationContext.configure(conn).get_current_heads())
    return current == heads


def visible_in(file_table: type[tables.File], generation: int) -> ColumnElement[bool]:
    """SQL condition: the file version row is part of ``generation``."""
    f = file_table
    return and_(f.gen_from <= generation, or_(f.gen_to.is_(None), f.gen_to > generation))


class str_position(FunctionElement[int]):
    """1-based position of a substring (0 when absent): ``instr`` on SQLite, ``strpos`` on PostgreSQL."""

    type = Integer()
    inherit_cache = True
    name = "str_position"


@compiles(str_position)
def _str_position(element: str_position, compiler: Any, **kw: Any) -> str:
    return f"instr({compiler.process(element.clauses, **kw)})"


@compiles(str_position, "postgresql")
def _str_position_pg(element: str_position, compiler: Any, **kw: Any) -> str:
    return f"strpos({compiler.process(element.clauses, **kw)})"


class _json_array_len(FunctionElement[int]):
    type = Integer()
    inherit_cache = True
    name = "json_array_len"


def json_array_len(column: Any, key: str) -> _json_array_len:
    """Length of the JSON array under top-level ``key`` of a JSON column (NULL when the key is missing)."""
    return _json_array_len(column, literal(key))


@compiles(_json_array_len)
def _json_array_len_sqlite(element: _json_array_len, compiler: Any, **kw: Any) -> str:
    column, key = (compiler.process(c, **kw) for c in element.clauses)
    return f"json_array_length({column}, '$.' || {key})"


@compiles(_json_array_len, "postgresql")
def _json_array_len_pg(element: _json_array_len, compiler: Any, **kw: Any) -> str:
    column, key = (compiler.process(c, **kw) for c in element.clauses)
    return f"json_array_length(({column}) -> {key})"
