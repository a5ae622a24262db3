"""A throwaway PostgreSQL cluster for tests: initdb into a temp dir, started on 127.0.0.1, always stopped.

Binaries come from ``$SIFT_PG_BIN``, ``PATH`` or Debian's ``/usr/lib/postgresql/<version>/bin`` (install them
with ``scripts/pg.sh``). PostgreSQL refuses to run as root, so as root the cluster belongs to the ``postgres``
OS user (or ``nobody`` when there is none) and the server runs as that user; the data directory, socket and log
all live in the temp dir, which is removed on :meth:`PgServer.stop`. A server given its own ``root`` (a benchmark
keeping a loaded cluster) reuses the cluster found there and leaves it on disk when stopped.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

SUPERUSER = "postgres"
TEMPLATE_DB = "sift_template"

# Durability is irrelevant for a cluster that is deleted after the run; these make it several times faster.
SERVER_OPTIONS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "300",
    "shared_buffers": "64MB",
    "listen_addresses": "127.0.0.1",
}


class PgUnavailable(RuntimeError):
    """No PostgreSQL server binaries were found."""


def find_bin_dir() -> Path:
    """The directory holding ``initdb``/``pg_ctl`` (newest Debian version when several are installed)."""
    explicit = os.environ.get("SIFT_PG_BIN")
    if explicit:
        return Path(explicit)
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(on_path).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    if versions:
        return Path(versions[-1]).parent
    raise PgUnavailable("PostgreSQL server binaries not found; run scripts/pg.sh (needs root for apt-get)")


def pgvector_bin_dir() -> Path:
    """Server binaries with the pgvector extension: PostgreSQL 16 + pgvector bundled by the ``pgserver`` wheel
    (the ``test`` extra; Debian's ``postgresql`` package has no pgvector)."""
    try:
        import pgserver
    except ImportError as exc:
        raise PgUnavailable("the pgvector tests need the pgserver package: pip install -e '.[test]'") from exc
    return Path(pgserver.__file__).parent / "pginstall" / "bin"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_user() -> pwd.struct_passwd | None:
    """The OS user the server runs as when we are root; None when we can run it ourselves."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PgUnavailable("running as root and neither a 'postgres' nor a 'nobody' user exists to run the server")


class PgServer:
    """One PostgreSQL cluster in a temp dir; make databases with :meth:`create_database`."""

    def __init__(self, bin_dir: Path | None = None, root: Path | None = None) -> None:
        self.bin_dir = bin_dir or find_bin_dir()
        self.user = _server_user()
        self.keep = root is not None
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve() if root is not None else Path(tempfile.mkdtemp(prefix="sift-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self.running = False
        self._made_template = False

    # -- lifecycle -------------------------------------------------------------------------------------------
    def _run(self, *cmd: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        kwargs: dict = {}
        if self.user is not None:
            kwargs = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(LC_ALL="C.UTF-8", LANG="C.UTF-8", HOME=str(self.root))
        result = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=self.root, **kwargs)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr or result.stdout}"
                               f"\n{self._log_tail()}")
        return result

    def _log_tail(self) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        except OSError:
            return ""

    def start(self) -> PgServer:
        """initdb (once) and start the server on a free port; retried on a port taken in between."""
        if self.user is not None:
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        if not self.data.exists():
            self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                      "-E", "UTF8", "--locale=C", "--no-sync")
        options = " ".join(f"-c {k}={v}" for k, v in SERVER_OPTIONS.items())
        for _attempt in range(5):
            self.port = free_port()
            started = self._run(
                str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                "-o", f"{options} -p {self.port} -k {self.root}", "start", check=False,
            )
            if started.returncode == 0:
                self.running = True
                atexit.register(self.stop)
                return self
            time.sleep(0.2)
        raise RuntimeError(f"PostgreSQL did not start:\n{started.stderr}\n{self._log_tail()}")

    def stop(self) -> None:
        """Stop the server and delete its directory (a kept one: shut down cleanly, left); safe to call twice."""
        if self.running:
            # A kept cluster is read again: a clean shutdown spares it crash recovery on the next start.
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast" if self.keep else "immediate",
                      "-w", "stop", check=False)
            self.running = False
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PgServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- databases -------------------------------------------------------------------------------------------
    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of ``database`` on this server (psycopg 3 driver)."""
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run one statement in autocommit mode (CREATE/DROP DATABASE cannot run in a transaction)."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, dbname=database,
                             autocommit=True) as conn:
            conn.execute(sql)

    def next_xid(self) -> int:
        """The next transaction id of the cluster: it moves whenever anything is written to any database."""
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, dbname="postgres",
                             autocommit=True) as conn:
            return int(conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()[0])

    def create_database(self, name: str | None = None, migrated: bool = False) -> str:
        """A new empty database (or a copy of one migrated to the Alembic head); returns its URL."""
        name = name or f"t_{uuid.uuid4().hex[:16]}"
        if migrated and not self._made_template:
            self._make_template()
        template = TEMPLATE_DB if migrated else "template0"
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE {template}')
        return self.url(name)

    def clone_database(self, source: str, name: str) -> str:
        """A copy of ``source`` named ``name`` (replacing one left over); clients of ``source`` are disconnected."""
        self.drop_database(name)
        for attempt in range(50):
            self.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         f"WHERE datname = '{source}' AND pid <> pg_backend_pid()")
            try:
                self.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')
                return self.url(name)
            except Exception as exc:  # psycopg.errors.ObjectInUse: a terminated backend has not exited yet
                if "being accessed by other users" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.05)
        raise AssertionError("unreachable")

    def drop_database(self, name: str) -> None:
        """Drop ``name``, disconnecting whoever is still connected."""
        self.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _make_template(self) -> None:
        from sift.db import upgrade

        self.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)')
        self.execute(f'CREATE DATABASE "{TEMPLATE_DB}" TEMPLATE template0')
        upgrade(self.url(TEMPLATE_DB))
        self._made_template = True


def database_name(url: str) -> str:
    """The database part of a PostgreSQL URL."""
    return url.rsplit("/", 1)[-1].split("?", 1)[0]
