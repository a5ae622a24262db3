"""Real open-source packages from PyPI and npm, pinned and downloaded once into the test cache.

Importable without pytest: the test fixtures (``tests/conftest.py``), the benches and the train-set generator
(``lab/train/make_pairs.py``) all fetch through here, so every archive is checked against one pin and
unpacked once.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tarfile
import urllib.request
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("SIFT_TEST_CACHE", Path(__file__).parent / ".cache"))

# Real projects used by the tests and the eval sets; pinned so line numbers in gold spans stay true.
SDISTS = {
    "attrs": "25.3.0", "marshmallow": "3.26.1", "click": "8.1.7", "structlog": "26.1.0", "apscheduler": "3.11.3",
    "loguru": "0.7.3", "peewee": "4.5.3", "sqlparse": "0.6.1", "voluptuous": "0.16.0", "markdown": "3.11.3",
    "cerberus": "1.3.8", "tabulate": "0.10.0", "jellyfish": "1.3.0", "typer": "0.9.4", "pytest": "8.4.2",
    "xarray": "2025.7.1",
}
# PyPI's simple API supplies each file's sha256; the test-set projects pin it here as well, so the archive their
# frozen spans were checked against can never change under them.
SDIST_SHA256 = {
    "structlog-26.1.0": "f63a716cbd1b1291cf7661de7794b455acfa4c43c5bcf1630e6ad5ddc1adb3b7",
    "apscheduler-3.11.3": "cd2fcc9330039a81a5893472ad49facf23a6d5604cbe1d918c835c6de7834d5a",
    "loguru-0.7.3": "19480589e77d47b8d85b2c827ad95d49bf31b0dcde16593892eb51dd18706eb6",
    "peewee-4.5.3": "434576afaf806428a01f84af74c42fde59372c4f6a6eba26d9b5372113344a8a",
    "sqlparse-0.6.1": "ca722573f848ff2d30e40ea30f53a104b7dea7635ea9285891263eb2c58fb6e7",
    "voluptuous-0.16.0": "006535e22fed944aec17bef6e8725472476194743c87bd233e912eb463f8ff05",
    "markdown-3.11.3": "81eb91631dc97ad1efbc76019ef0f80fe90ca49ddf81546752d79989c3bfff3e",
    "cerberus-1.3.8": "579554887ffd189226774b87570f4a76db75cf0efcbaffcacd5e98b8ee877f61",
    "tabulate-0.10.0": "e2cfde8f79420f6deeffdeda9aaec3b6bc5abce947655d17ac662b126e48a60d",
    "jellyfish-1.3.0": "fd77ba8e1c9835d2c56b11bde6765380cbcac333037974c4ba4b60092c383212",
    "typer-0.9.4": "f714c2d90afae3a7929fcd72a3abb08df305e1ff61719381384211c4070af57f",
    "pytest-8.4.2": "86c0d0b93306b961d58d62a4db4879f27fe25513d4b969df351abdddb3c30e01",
    "xarray-2025.7.1": "2884bf5672b540fcc6ff8c20a3196bda0d78fbfb4d67398d60526e97c2faceef",
}
# npm packages: name -> (version, sha256 of the registry tarball). The registry publishes only sha1 and sha512
# (as `shasum`/`integrity`), so the sha256 is computed from the tarball and pinned here.
NPM_PACKAGES = {
    "axios": ("1.21.1", "5659acb8c9414ad88aa539db8e529947c9bac8cdf55973e314a078fc0205751c"),
    "semver": ("7.8.6", "c6584c324e8b1e5d0403c6c16ee2b25dd61567c13f0449a58820350c21cd71bf"),
    "qs": ("6.17.1", "b7405805e2055f9900dd48c42d226ed4ab51f5f43459ba4781c3f6f6763ed3de"),
    "luxon": ("3.7.2", "498078da47254917ea264631160880fec8936994de3e6271e9c75c542bd35832"),
    "yup": ("1.7.1", "296196395b10ac29d5a4173171bf1c6a42a99541f0a363fc3a82e9cfed2252fa"),
    "jsonwebtoken": ("9.0.3", "d9af2628a7a4dda25acf1e19c7ecc2468e1e9e8d4619fe2cae829e89d96f6b82"),
    "ejs": ("7.0.2", "1e77def2bb9a66761aded08e3354b02d92f1b15e791596fd74992fd7bef34adf"),
    "immer": ("11.2.10", "f8184e2750790534d2faf01137b39133586ef2c14fa504ee82409568dbb0b32d"),
    "mustache": ("4.2.0", "05ea84bf212d37d84fb201aa77a82b347a6f744a3fcaef750c88e58f889c357c"),
    "dayjs": ("1.11.23", "7da0ff55ddb6d4050b91ea0a11a8e9d92c048305155039387373f20be080e594"),
    # Not an eval project: a package published as dist/ builds only (cjs, esm and their browser variants).
    "uuid": ("11.1.0", "ec2013a661d5d449a872f259453bd59f1e0f30b60c57048949405b71914a1dc7"),
}

_SEPARATORS = re.compile(r"[-_.]+")


def _normalized(name: str) -> str:
    """PEP 503 normalisation: sdists of ``more-itertools`` may be named ``more_itertools-…``."""
    return _SEPARATORS.sub("-", name).lower()


def _download_sdist(name: str, version: str, dest: Path, pinned: str | None) -> Path:
    """Fetch the sdist through PyPI's JSON simple API (no build step), checking its sha256."""
    dest.mkdir(parents=True, exist_ok=True)
    req = urllib.request.Request(
        f"https://pypi.org/simple/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        files = json.load(resp)["files"]
    wanted = _normalized(f"{name}-{version}")
    (entry,) = [
        f for f in files
        if f["filename"].endswith(".tar.gz") and _normalized(f["filename"].removesuffix(".tar.gz")) == wanted
    ]  # fmt: skip
    sha256 = entry["hashes"]["sha256"]
    if pinned is not None and pinned != sha256:
        raise RuntimeError(f"PyPI lists sha256 {sha256} for {entry['filename']}, but {pinned} is pinned")
    return download(entry["url"], sha256, dest / entry["filename"])


def download(url: str, sha256: str, out: Path) -> Path:
    """Fetch ``url`` into ``out`` unless it is there already, checking the bytes against ``sha256``."""
    if not out.exists():
        with urllib.request.urlopen(url, timeout=120) as resp:
            data = resp.read()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise RuntimeError(f"sha256 mismatch for {out.name}")
        out.write_bytes(data)
    return out


def _unpack_once(archive_of: Callable[[], Path], target: Path) -> Path:
    """Unpack the archive ``archive_of()`` returns (one top directory) as ``target``, once.

    A ``.complete`` marker beside (not inside) ``target`` records a finished unpack: the tree is ingested as it is.
    """
    marker = target.with_name(f"{target.name}.complete")
    if marker.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    # Test workers (pytest-xdist) ask for the same project at once: one downloads and unpacks, the others wait.
    with target.with_name(f".{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():  # unpacked while this one waited
            return target
        return _unpack(archive_of, target, marker)


def _unpack(archive_of: Callable[[], Path], target: Path, marker: Path) -> Path:
    """Download (through ``archive_of``) and unpack into ``target``, then write ``marker``."""
    archive = archive_of()
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp, filter="data")
    (inner,) = list(tmp.iterdir())
    inner.rename(target)
    tmp.rmdir()
    marker.write_text("ok")
    return target


def fetch_sdist(name: str, version: str | None = None, sha256: str | None = None) -> Path:
    """Download ``name``'s sdist from PyPI once into the test cache and return the unpacked source root.

    Without ``version`` the ``SDISTS`` pin is used; ``sha256`` (or the ``SDIST_SHA256`` pin) must then match
    what PyPI lists for the file.
    """
    version = version or SDISTS[name]
    pinned = sha256 or SDIST_SHA256.get(f"{name}-{version}")
    target = CACHE / f"{name}-{version}"
    return _unpack_once(lambda: _download_sdist(name, version, CACHE / "downloads", pinned), target)


def fetch_npm(name: str, version: str | None = None, sha256: str | None = None) -> Path:
    """Download ``name``'s pinned tarball from the npm registry once into the test cache (checking the pinned
    sha256) and return the unpacked package root (the tarball's ``package/`` directory).

    Without ``version`` and ``sha256`` the ``NPM_PACKAGES`` pin is used.
    """
    if version is None or sha256 is None:
        version, sha256 = NPM_PACKAGES[name]
    basename = name.rsplit("/", 1)[-1]  # a scoped package's tarball is named without its scope
    url = f"https://registry.npmjs.org/{name}/-/{basename}-{version}.tgz"
    downloads = CACHE / "downloads"

    def archive() -> Path:
        downloads.mkdir(parents=True, exist_ok=True)
        return download(url, sha256, downloads / f"{basename}-{version}.tgz")

    return _unpack_once(archive, CACHE / f"npm-{basename}-{version}")
