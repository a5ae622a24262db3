"""A hostile repository, written by code (nothing binary is committed): every input that has broken an ingest.

``make_hostile_repo(tmp_path)`` returns the repository root. ``HOSTILE_SKIPS`` names, per skip reason, a path the
walk must leave out for that reason; ``HOSTILE_TEXT`` names files whose text must be stored byte for byte.
"""

from __future__ import annotations

import os
from pathlib import Path

DEEP_LEVELS = 1000
MAX_FILE_BYTES = 64 * 1024

ESC = "\x1b"
RLO = "\u202e"  # right-to-left override: makes "exe.txt" display as "txt.exe"

FORM_FEED_PY = (
    '"""Sections separated by form feeds, as in CPython\'s email/feedparser.py."""\n'
    "\n"
    "\f\n"
    "def first():\n"
    '    """The first section\u2028still one line for every editor."""\n'
    "    return 1\n"
    "\f\n"
    "def second():\n"
    "    value = 'a\fb'  # a form feed inside a line\n"
    "    return value\n"
    "\n"
    "\f\n"
    "class Third:\n"
    "    def method(self):\n"
    "        return 'separator\u2028inside'\n"
)

FORM_FEED_MD = (
    "# Hostile guide\n"
    "\n"
    "Intro paragraph with a line separator\u2028right here.\n"
    "\f\n"
    "## Form feeds\n"
    "\n"
    "A page break\fin the middle of a line, and a paragraph separator\u2029too.\n"
    "\n"
    "## After the breaks\n"
    "\n"
    "The heading above sits on line 9 for every editor; sift must say so too.\n"
)

ESC_CONTENT_PY = (
    f'"""Terminal escapes: {ESC}[31mred{ESC}[0m, a title set {ESC}]0;pwned\x07, a bidi {RLO}override."""\n'
    "\n"
    "def escape_sequences():\n"
    f'    return "{ESC}[2J{ESC}[H cleared"\n'
)

CRLF_PY = "def crlf_function():\r\n    return 'windows'\r\n\r\ndef after_crlf():\r\n    return 2\r\n"
LONE_CR_MD = "# Old Mac\r\rA paragraph\rwith lone carriage returns.\n\n## Next\n\nText.\n"

BROKEN_PY = "def broken(:\n    return )\nclass\n"

#: skip reason → a repo-relative path (as the walk reports it) skipped for that reason.
HOSTILE_SKIPS = {
    "ignored": "debug.log",
    "vendored": "node_modules/",
    "binary": "blob.dat",
    "undecodable": "latin1.py",
    "undecodable_name": "bad\\xffname.py",
    "too_large": "huge.txt",
    "symlink_outside": "escape_link.py",
    "unreadable": "fifo.py",
}

#: files the walk must keep, with their exact text.
HOSTILE_TEXT = {
    "formfeed.py": FORM_FEED_PY,
    "docs/formfeed.md": FORM_FEED_MD,
    f"esc{ESC}[31mred.py": ESC_CONTENT_PY,
    f"bidi{RLO}txt.py": ESC_CONTENT_PY,
    "new\nline.py": "def newline_in_name():\n    return 'n'\n",
    "crlf.py": CRLF_PY,
    "lonecr.md": LONE_CR_MD,
    "broken.py": BROKEN_PY,
    "README.md": "# Hostile repository\n\nEvery case that has broken an ingest, in one tree.\n",
}


def deep_path(levels: int = DEEP_LEVELS) -> str:
    """The repo-relative path of the file at the bottom of the deep directory chain."""
    return "deep/" + "d/" * levels + "bottom.py"


def _mkdirs_iteratively(base: Path, parts: list[str]) -> Path:
    """Create nested directories one at a time (``Path.mkdir(parents=True)`` recurses per level)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            os.mkdir(part, dir_fd=fd)
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        return base.joinpath(*parts)
    finally:
        os.close(fd)


def make_hostile_repo(tmp_path: Path, *, deep_levels: int = DEEP_LEVELS) -> Path:
    """Write the hostile repository under ``tmp_path`` and return its root."""
    tmp_path = tmp_path.resolve()
    root = tmp_path / "hostile"
    outside = tmp_path / "outside"
    outside.mkdir(parents=True)
    (outside / "secret.py").write_text("SECRET = 'outside the root'\n")
    (root / "docs").mkdir(parents=True)
    for rel, text in HOSTILE_TEXT.items():
        (root / rel).write_bytes(text.encode())
    # .gitignore rules that try to reach outside the root must not hide or expose anything.
    (root / ".gitignore").write_text("../*\n/../x\n../../outside/\n!../secret.py\n*.log\n")
    (root / "debug.log").write_text("ignored by *.log\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("module.exports = 1;\n")
    (root / "blob.dat").write_bytes(b"\x00\x01\x02binary\x00")
    (root / "latin1.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (root / "huge.txt").write_text("x" * 99 + "\n" * MAX_FILE_BYTES)
    os.symlink(outside / "secret.py", root / "escape_link.py")
    os.symlink(outside, root / "escape_dir")
    os.mkfifo(root / "fifo.py")
    # Names that are not UTF-8: a file and a directory (whose contents are never seen).
    os.close(os.open(os.fsencode(root) + b"/bad\xffname.py", os.O_WRONLY | os.O_CREAT, 0o644))
    os.mkdir(os.fsencode(root) + b"/dir\xfe")
    with open(os.fsencode(root) + b"/dir\xfe/inner.py", "wb") as fh:
        fh.write(b"inner = 1\n")
    bottom = _mkdirs_iteratively(root, ["deep", *["d"] * deep_levels])
    (bottom / "bottom.py").write_text("def at_the_bottom():\n    return 'deep'\n")
    return root


def remove_tree(root: Path) -> None:
    """Delete a tree deeper than ``shutil.rmtree`` (recursive on Python 3.11) can go, without following links."""
    stack = [os.fsencode(root)]
    while stack:
        top = stack[-1]
        subdirs = []
        with os.scandir(top) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.path)
                else:
                    os.unlink(entry.path)
        if subdirs:
            stack.extend(subdirs)
        else:
            os.rmdir(stack.pop())
