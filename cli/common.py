"""Helpers shared by CLI commands: common options, Settings built from them, and the database of commands that
only read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from sift.config import Settings


def add_common(p: argparse.ArgumentParser) -> None:
    """Options every command that touches a data directory takes."""
    p.add_argument("--data-dir", type=Path, default=None,
                   help="data directory (default: $SIFT_DATA_DIR, else the nearest .sift in this folder or a parent, "
                        "else ./.sift)")


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the environment, with command-line overrides applied."""
    from sift.config import Settings  # pydantic-settings: not needed to parse arguments or print --help

    overrides = {}
    if getattr(args, "data_dir", None) is not None:
        overrides["data_dir"] = args.data_dir
    return Settings(**overrides)


def where(settings: Settings) -> str:
    """Where knowledge bases were looked for, for messages: the data directory, or the configured database."""
    if settings.database_url:
        from sqlalchemy.engine import make_url

        return f"the database {make_url(settings.database_url).render_as_string(hide_password=True)}"
    return f"the data directory {settings.data_dir.absolute()}"


def _missing_sqlite_file(settings: Settings) -> Path | None:
    """The SQLite file the settings name when it does not exist yet (None for one that does, or another database)."""
    from sqlalchemy.engine import make_url

    url = make_url(settings.resolved_database_url())
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    path = Path(url.database)
    return None if path.exists() else path


def has_database(settings: Settings) -> bool:
    """Whether there is a database to read (a server database always counts: it is not created here)."""
    return _missing_sqlite_file(settings) is None


def open_existing(settings: Settings) -> Engine:
    """The database, for a command that only reads: one that does not exist yet is a NotFound naming where it was
    looked for, and nothing (no data directory, no empty ``sift.db``) is created."""
    from sift.errors import NotFound

    if not has_database(settings):
        state = "holds no sift database" if settings.database_url or settings.data_dir.exists() else "does not exist"
        raise NotFound(f"no knowledge bases: {where(settings)} {state}. Create one with `sift ingest PATH --kb NAME` "
                       "(by default in the nearest .sift of the current folder or its parents, else ./.sift), or "
                       "name the data directory you ingested into with --data-dir DIR or $SIFT_DATA_DIR")
    from sift.db import open_database

    return open_database(settings)


def kb_not_found_note(args: argparse.Namespace) -> str:
    """What a "knowledge base does not exist" message adds on the command line: where it looked, and how to look
    elsewhere."""
    try:
        settings = settings_from(args)
    except Exception:  # noqa: BLE001 - settings that fail to build were reported already; the note is extra
        return ""
    return f" (looked in {where(settings)}; name another with --data-dir DIR or $SIFT_DATA_DIR)"
