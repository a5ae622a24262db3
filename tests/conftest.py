"""Shared fixtures: a tiny repository on disk, and real open-source packages from PyPI and npm cached once."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

# The pins and the download/unpack helpers live in tests/sources.py (importable without pytest); they are
# re-exported here for the fixtures below and for benches that import them from conftest.
from tests.sources import CACHE, NPM_PACKAGES, SDIST_SHA256, SDISTS, fetch_npm, fetch_sdist  # noqa: F401

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def attrs_src() -> Path:
    """The attrs sdist, unpacked (a real repository: Python package, Markdown and rST docs)."""
    return fetch_sdist("attrs")


@pytest.fixture(scope="session")
def marshmallow_src() -> Path:
    """The marshmallow sdist, unpacked."""
    return fetch_sdist("marshmallow")


@pytest.fixture(scope="session")
def click_src() -> Path:
    """The click sdist, unpacked (a Python package with reStructuredText docs)."""
    return fetch_sdist("click")


@pytest.fixture(scope="session")
def structlog_src() -> Path:
    """The structlog sdist, unpacked (Python with Markdown and reST docs; a test-set project)."""
    return fetch_sdist("structlog")


@pytest.fixture(scope="session")
def axios_src() -> Path:
    """The axios npm package, unpacked (JavaScript, TypeScript declarations and Markdown; a test-set project)."""
    return fetch_npm("axios")


@pytest.fixture(scope="session")
def uuid_src() -> Path:
    """The uuid npm package, unpacked: no sources, only builds under dist/ that package.json points into."""
    return fetch_npm("uuid")


@pytest.fixture(scope="session")
def apscheduler_src() -> Path:
    """The APScheduler sdist, unpacked (Python with reST docs; a second test-set project)."""
    return fetch_sdist("apscheduler")


@pytest.fixture(scope="session")
def semver_src() -> Path:
    """The semver npm package, unpacked (JavaScript and Markdown; a second test-set project)."""
    return fetch_npm("semver")


@pytest.fixture(scope="session")
def loguru_src() -> Path:
    """The loguru sdist, unpacked (Python with a Markdown README; a third test-set project)."""
    return fetch_sdist("loguru")


@pytest.fixture(scope="session")
def qs_src() -> Path:
    """The qs npm package, unpacked (JavaScript and Markdown; a third test-set project)."""
    return fetch_npm("qs")


@pytest.fixture(scope="session")
def peewee_src() -> Path:
    """The peewee sdist, unpacked (Python with reStructuredText docs; a fourth test-set project)."""
    return fetch_sdist("peewee")


@pytest.fixture(scope="session")
def luxon_src() -> Path:
    """The luxon npm package, unpacked (JavaScript and Markdown; a fourth test-set project)."""
    return fetch_npm("luxon")


@pytest.fixture(scope="session")
def sqlparse_src() -> Path:
    """The sqlparse sdist, unpacked (Python with reStructuredText docs; a fifth test-set project)."""
    return fetch_sdist("sqlparse")


@pytest.fixture(scope="session")
def yup_src() -> Path:
    """The yup npm package, unpacked (JavaScript, TypeScript declarations and Markdown; a fifth test-set project)."""
    return fetch_npm("yup")


@pytest.fixture(scope="session")
def jellyfish_src() -> Path:
    """The jellyfish sdist, unpacked (Rust with a pure-Python copy and Markdown docs; a sixth test-set project)."""
    return fetch_sdist("jellyfish")


@pytest.fixture(scope="session")
def typer_src() -> Path:
    """The typer sdist, unpacked (Markdown docs far larger than its Python code; a sixth test-set project)."""
    return fetch_sdist("typer")


@pytest.fixture(scope="session")
def pytestpkg_src() -> Path:
    """The pytest sdist, unpacked (an external set's project: public benchmark questions, eval/sets/external/).

    Not ``pytest_src``: a conftest name that starts with ``pytest_`` is taken for a hook."""
    return fetch_sdist("pytest")


@pytest.fixture(scope="session")
def xarray_src() -> Path:
    """The xarray sdist, unpacked (an external set's project: public benchmark questions, eval/sets/external/)."""
    return fetch_sdist("xarray")


@pytest.fixture(scope="session")
def voluptuous_src() -> Path:
    """The voluptuous sdist, unpacked (Python with a Markdown README; a second-dev-set project)."""
    return fetch_sdist("voluptuous")


@pytest.fixture(scope="session")
def markdown_src() -> Path:
    """The Python-Markdown sdist, unpacked (Python with Markdown docs; a second-dev-set project)."""
    return fetch_sdist("markdown")


@pytest.fixture(scope="session")
def jsonwebtoken_src() -> Path:
    """The jsonwebtoken npm package, unpacked (JavaScript and a Markdown README; a second-dev-set project)."""
    return fetch_npm("jsonwebtoken")


@pytest.fixture(scope="session")
def ejs_src() -> Path:
    """The ejs npm package, unpacked (JavaScript and a Markdown README; a second-dev-set project)."""
    return fetch_npm("ejs")


@pytest.fixture(scope="session")
def immer_src() -> Path:
    """The immer npm package, unpacked (TypeScript sources and a short Markdown README; a second-dev-set project)."""
    return fetch_npm("immer")


TINY_FILES = {
    "pkg/__init__.py": '"""Tiny package."""\n',
    "pkg/auth.py": (
        '"""Authentication helpers."""\n'
        "\n"
        "import hmac\n"
        "\n"
        "\n"
        "class AuthService:\n"
        '    """Validates bearer tokens against a shared secret."""\n'
        "\n"
        "    def __init__(self, secret: str) -> None:\n"
        "        self.secret = secret\n"
        "\n"
        "    def validate_token(self, token: str) -> bool:\n"
        '        """Return True when the token matches the secret."""\n'
        "        return hmac.compare_digest(token, self.secret)\n"
        "\n"
        "\n"
        "def login(service: AuthService, token: str) -> str:\n"
        '    """Log a user in with a token."""\n'
        "    if not service.validate_token(token):\n"
        '        raise PermissionError("bad token")\n'
        '    return "ok"\n'
    ),
    "docs/guide.md": (
        "# Guide\n"
        "\n"
        "Intro text for the guide.\n"
        "\n"
        "## Authentication\n"
        "\n"
        "Tokens are validated by `AuthService.validate_token`.\n"
        "\n"
        "```python\n"
        "# not a heading\n"
        "```\n"
        "\n"
        "### Rotating secrets\n"
        "\n"
        "Rotate the secret every 90 days.\n"
        "\n"
        "## Configuration\n"
        "\n"
        "Set `SIFT_DATA_DIR` to move the data directory.\n"
    ),
    "README.md": "# Tiny\n\nA tiny project used by the tests.\n",
    ".gitignore": "ignored.py\n",
    "ignored.py": "def hidden():\n    pass\n",
}


@contextmanager
def ingested_repo(base: Path, files: Mapping[str, str], kb: str, embedder: Any) -> Iterator[tuple[Any, Any, Any]]:
    """Write ``files`` under ``base/kb``, ingest them as knowledge base ``kb`` (data in ``base/data``) and yield
    ``(settings, engine, searcher)`` over it; the searcher is closed afterwards."""
    from sift.config import Settings
    from sift.db import open_database
    from sift.ingest.pipeline import ingest
    from sift.retrievers.backend import make_index_cache
    from sift.retrievers.search import Searcher

    repo = base / kb
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    settings = Settings(data_dir=base / "data")
    ingest(settings, repo, kb, embedder=embedder)
    engine = open_database(settings)
    searcher = Searcher(engine, make_index_cache(settings, engine), embedder)
    try:
        yield settings, engine, searcher
    finally:
        searcher.close()


@pytest.fixture
def tiny_repo(tmp_path: Path) -> Path:
    """About five files: Python with a class, Markdown with nested headings, a README and an ignored file."""
    root = tmp_path / "tiny"
    for rel, text in TINY_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture(scope="session")
def local_embedder():
    """The real all-MiniLM-L6-v2 model, loaded once per test process."""
    from sift.embed import LocalEmbedder

    return LocalEmbedder()


# --- PostgreSQL -------------------------------------------------------------------------------------------------
# `SIFT_TEST_DATABASE=postgres` runs the suite against a throwaway PostgreSQL cluster (tests/pg.py), mirroring
# SQLite's "a fresh data dir is a fresh database": every test module gets a database migrated to head for its
# module-scoped fixtures, and every test its own database, exported as SIFT_DATABASE_URL — a copy of the module's
# when the test uses a module or session fixture that wrote to the database, else an empty migrated one.

_WRITING_FIXTURES: set[str] = set()
_PG_SERVERS: list = []  # the running server of this test process, for the fixture-setup hook


def pg_mode() -> bool:
    """True when the suite runs against PostgreSQL instead of SQLite."""
    return os.environ.get("SIFT_TEST_DATABASE", "sqlite").lower() in ("postgres", "postgresql", "pg")


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for this test process, stopped (and its directory removed) at the end."""
    from tests.pg import PgServer

    server = PgServer().start()
    _PG_SERVERS.append(server)
    try:
        yield server
    finally:
        _PG_SERVERS.remove(server)
        server.stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    """The URL of a new, empty PostgreSQL database (no migrations run), dropped after the test."""
    from tests.pg import database_name

    url = pg_server.create_database()
    yield url
    pg_server.drop_database(database_name(url))


@pytest.fixture(scope="module", autouse=True)
def _module_database(request):
    """In PostgreSQL mode: a migrated database for the module's own fixtures."""
    if not pg_mode():
        yield None
        return
    from tests.pg import database_name

    server = request.getfixturevalue("pg_server")
    url = server.create_database(migrated=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SIFT_DATABASE_URL", url)
        yield url
    server.drop_database(database_name(url))


@pytest.fixture(autouse=True)
def _test_database(request, _module_database, monkeypatch):
    """In PostgreSQL mode: SIFT_DATABASE_URL is a copy of the module's database, private to this test."""
    if _module_database is None:
        yield
        return
    from tests.pg import database_name

    server = request.getfixturevalue("pg_server")
    source = database_name(_module_database)
    if _WRITING_FIXTURES & set(request.fixturenames):
        name = f"{source}_{abs(hash(request.node.nodeid)) % 10**8}"
        url = server.clone_database(source, name)
    else:
        url = server.create_database(migrated=True)
        name = database_name(url)
    monkeypatch.setenv("SIFT_DATABASE_URL", url)
    yield
    server.drop_database(name)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """In PostgreSQL mode, remember which module/session fixtures write to the database."""
    server = None
    if _PG_SERVERS and fixturedef.scope != "function" and not fixturedef.argname.startswith(("_", "pg_")):
        server = _PG_SERVERS[0]
    before = server.next_xid() if server else None
    yield
    if server is not None and server.next_xid() != before:
        _WRITING_FIXTURES.add(fixturedef.argname)


@pytest.fixture(params=["sqlite", "postgres"])
def any_database(request, tmp_path, monkeypatch) -> str:
    """Each test runs twice: on a SQLite file and on an empty PostgreSQL database; SIFT_DATABASE_URL points there."""
    if request.param == "postgres":
        url = request.getfixturevalue("pg_url")
    else:
        url = f"sqlite:///{tmp_path / 'sqlite' / 'sift.db'}"
    monkeypatch.setenv("SIFT_DATABASE_URL", url)
    return url


@pytest.fixture(scope="session")
def pgvector_server():
    """A PostgreSQL server with the pgvector extension (pgserver's binaries) for this test process."""
    from tests.pg import PgServer, pgvector_bin_dir

    server = PgServer(pgvector_bin_dir()).start()
    try:
        yield server
    finally:
        server.stop()
