"""The docs pages render in a real browser with no network: Swagger UI's files come from the app itself.

Chromium runs headless with every host name except 127.0.0.1 unresolvable, so a page that still reached for a
CDN would stay blank. ``scripts/test.sh`` installs chromium (``scripts/chromium.sh``), so this runs in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from sift.api.app import create_app
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings

CHROMIUM = os.environ.get("SIFT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/chromium.sh)")

OFFLINE = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory, local_embedder):
    cfg = ApiSettings(data_dir=tmp_path_factory.mktemp("docs-pages") / "data")
    with serve_in_thread(create_app(cfg, embedder=local_embedder)) as url:
        yield url


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    cmd = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--no-first-run", f"--user-data-dir={profile}",
           f"--host-resolver-rules={OFFLINE}", "--virtual-time-budget=15000", "--window-size=1280,900", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)


@pytest.mark.parametrize("page", ["/schema", "/schema/swagger"])
def test_docs_page_lists_every_operation_offline(base_url: str, tmp_path: Path, page: str) -> None:
    dom = _chromium(tmp_path, "--dump-dom", base_url + page).stdout
    paths = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', dom))
    assert {"/v1/chat", "/v1/chat/stream", "/v1/search", "/v1/docql", "/v1/kbs", "/health"} <= paths, dom[:2000]


def test_docs_page_screenshot_is_not_blank(base_url: str, tmp_path: Path) -> None:
    shot = tmp_path / "swagger.png"
    _chromium(tmp_path, f"--screenshot={shot}", base_url + "/schema/swagger")
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 900)
    colours = image.getcolors(maxcolors=1 << 20) or []
    # a blank page is one or two colours; the rendered UI has method badges, text and borders
    assert len(colours) > 200, len(colours)
    badge_green = sum(n for n, (r, g, b) in colours if g > 150 and r < 120 and b < 160)  # POST badges
    assert badge_green > 500
