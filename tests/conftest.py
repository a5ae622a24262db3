"""Shared fixtures: a tiny repository on disk, and real open-source sdists from PyPI cached once."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import urllib.request
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

CACHE = Path(os.environ.get("SIFT_TEST_CACHE", Path(__file__).parent / ".cache"))

# Real projects used by the tests and the eval sets; pinned so line numbers in gold spans stay true.
SDISTS = {"attrs": "25.3.0", "marshmallow": "3.26.1"}


def _download_sdist(name: str, version: str, dest: Path) -> Path:
    """Fetch the sdist through PyPI's JSON simple API (no build step), checking its sha256."""
    dest.mkdir(parents=True, exist_ok=True)
    req = urllib.request.Request(
        f"https://pypi.org/simple/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    wanted = f"{name}-{version}.tar.gz".lower()
    (entry,) = [f for f in files if f["filename"].lower() == wanted]
    out = dest / entry["filename"]
    if not out.exists():
        with urllib.request.urlopen(entry["url"], timeout=120) as resp:
            data = resp.read()
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            raise RuntimeError(f"sha256 mismatch for {entry['filename']}")
        out.write_bytes(data)
    return out


def fetch_sdist(name: str, version: str | None = None) -> Path:
    """Download ``name``'s sdist from PyPI once into the test cache and return the unpacked source root."""
    version = version or SDISTS[name]
    target = CACHE / f"{name}-{version}"
    marker = CACHE / f"{name}-{version}.complete"  # beside, not inside: the tree is ingested as it is
    if marker.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = _download_sdist(name, version, CACHE / "downloads")
    tmp = CACHE / f".{name}-{version}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
    (inner,) = list(tmp.iterdir())
    inner.rename(target)
    tmp.rmdir()
    marker.write_text("ok")
    return target


@pytest.fixture(scope="session")
def attrs_src() -> Path:
    """The attrs sdist, unpacked (a real repository: Python package, Markdown and rST docs)."""
    return fetch_sdist("attrs")


@pytest.fixture(scope="session")
def marshmallow_src() -> Path:
    """The marshmallow sdist, unpacked."""
    return fetch_sdist("marshmallow")


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
