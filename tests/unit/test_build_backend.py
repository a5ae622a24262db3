"""The build backend: setuptools' own, with no warning left for pip to print on an editable install."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Runs the PEP 660 hook the way pip's hook runner does: warnings recorded around the call, and every UserWarning
# among them is what pip 25+ prints as a BuildBackendWarning.
_HOOK = """
import json, sys, warnings
sys.path.insert(0, "scripts/backend")
import sift_build_backend as backend
with warnings.catch_warnings(record=True) as seen:
    wheel = backend.build_editable(sys.argv[1])
print(json.dumps({"wheel": wheel, "warnings": [f"{w.category.__name__}: {str(w.message)[:200]}" for w in seen
                                               if issubclass(w.category, UserWarning)]}))
"""


def test_build_backend_editable_install_warns_nothing(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _HOOK, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=300)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["wheel"].endswith(".whl") and (tmp_path / result["wheel"]).exists()
    assert result["warnings"] == []


def test_build_backend_keeps_every_setuptools_hook() -> None:
    sys.path.insert(0, str(ROOT / "scripts" / "backend"))
    try:
        import sift_build_backend as backend
        from setuptools import build_meta
    finally:
        sys.path.remove(str(ROOT / "scripts" / "backend"))
    for hook in ("build_wheel", "build_sdist", "get_requires_for_build_wheel", "prepare_metadata_for_build_wheel",
                 "get_requires_for_build_editable", "prepare_metadata_for_build_editable"):
        assert getattr(backend, hook) is getattr(build_meta, hook)
    assert backend.build_editable is not build_meta.build_editable
