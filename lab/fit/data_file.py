"""Where the fitting scripts write, and the word lists they derive from the train packages.

Every fitted file goes to ``FITTED`` (``sift/fitted/``, the package ``sift.fitted`` reads it), holding what the
product reads and nothing else; how it was chosen (grids, held-out figures) goes to ``DIAGNOSTICS`` beside this
module. The word lists (``docstring_verbs.json``, ``generic_words.json``) have one way to be written, one entry a
line, and to be checked against the committed file."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lab.train.make_pairs import PACKAGES, load_packages

FITTED = Path(__file__).resolve().parents[2] / "sift" / "fitted"
DIAGNOSTICS = Path(__file__).resolve().with_name("diagnostics")


def render(source: str, packages: int, settings: Mapping[str, Any], key: str, entries: Mapping[str, Any]) -> str:
    """The file's text: which script wrote it from how many packages (pinned by ``packages.json``'s hash), the
    ``settings`` it used, then ``entries`` under ``key``, one a line, in the order given."""
    head = {
        "source": source,
        "packages": packages,  # which ones: lab/train/packages.json, pinned by this hash
        "packages_sha256": hashlib.sha256(PACKAGES.read_bytes()).hexdigest(),
        **settings,
    }
    lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    body = [f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in entries.items()]
    return "{\n" + "\n".join(lines) + f'\n  {json.dumps(key)}: {{\n' + ",\n".join(body) + "\n  }\n}\n"


def write_or_check(path: Path, text: str, check: bool, key: str) -> int:
    """Write ``text`` to ``path`` (saying how many entries it holds under ``key``), or with ``check`` compare it
    with the committed file; the exit status."""
    if check:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            print(f"{path} differs from what the train packages give; run without --check", file=sys.stderr)
            return 1
        print(f"{path} reproduced", file=sys.stderr)
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {len(json.loads(text)[key])} {key} to {path}", file=sys.stderr)
    return 0


def main(doc: str, path: Path, key: str, text_of: Callable[[list[dict[str, str]]], str]) -> int:
    """A deriving script's command line: ``text_of`` the pinned packages, written to ``path`` or, with ``--check``,
    compared with the committed file; the exit status."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fail unless the committed file comes out equal")
    args = ap.parse_args()
    return write_or_check(path, text_of(load_packages()), args.check, key)
