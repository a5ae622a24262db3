"""Is the data directory the server started with still there? Deleted or replaced under a running server, its
database and indexes live on only in open file handles and are lost at the next restart: ``/ready`` says not
ready and requests that change anything are refused with 503 until the server restarts on a data directory that
exists."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url

from sift.config import Settings
from sift.errors import EnvironmentFailure


class DataDirGone(EnvironmentFailure):
    """The data directory (or the SQLite database in it) was deleted or replaced while the server ran."""


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class DataDirWatch:
    """Remembers the data directory's (and a SQLite database's) identity at start and tells when it changed."""

    def __init__(self, settings: Settings) -> None:
        self.paths = [settings.data_dir.resolve()]
        url = make_url(settings.resolved_database_url())
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            self.paths.append(Path(url.database).resolve())
        self._seen = {path: _identity(path) for path in self.paths}

    def problem(self) -> str | None:
        """None while everything is where it was at start, else what is gone and what to do."""
        for path, seen in self._seen.items():
            now = _identity(path)
            if now != seen:
                what = "was deleted" if now is None else "was replaced"
                kind = "data directory (SIFT_DATA_DIR)" if path == self.paths[0] else "database file in it"
                return (f"the server's {kind} {what} while it ran; nothing written now would survive a restart: "
                        "restore it, or restart the server on a data directory that exists")
        return None

    def check(self) -> None:
        """Raise DataDirGone when :meth:`problem` finds one."""
        if (problem := self.problem()) is not None:
            raise DataDirGone(problem)
