"""Repository walker: .gitignore-aware, skips VCS, vendored, binary and oversized files, never escapes the root.

``walk(root)`` yields one ``WalkedFile`` per indexable text file, in path order. Everything it leaves out
is counted in ``WalkStats.skipped`` under one reason: ``ignored``, ``vendored``, ``binary``,
``undecodable``, ``undecodable_name``, ``too_large``, ``symlink_outside`` or ``unreadable``. Skipped directories
are pruned (not descended into) and counted once, with a trailing ``/`` on their path.

Names are bytes on POSIX. A name that is not valid UTF-8 (Python hands it over with surrogate escapes) cannot
be stored, shown or cited, so it is skipped as ``undecodable_name`` and recorded with its bad bytes written as
``\\xNN``. The walk keeps its own stack of open directories, so no nesting depth can exhaust Python's.

Confinement does not trust path strings: the walk opens its root once (beneath ``within``, one component at a time
with ``O_NOFOLLOW``) and opens every directory and file it reads from that descriptor the same way, along the
entry's resolved path inside the root. A directory swapped for a symlink after it was checked is therefore never
followed: the open fails and the entry is skipped as ``unreadable``. Symlinks whose target lies inside the root are
followed; those leading out are skipped as ``symlink_outside``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from sift.ingest.confine import DirHandle, is_within, open_beneath, open_confined, open_inside
from sift.ingest.generated import (
    BINARY_EXTENSIONS,
    BUILD_TARGET_MARKERS,
    LOCK_FILES,
    MINIFIED_SUFFIXES,
    VENDORED_DIRS,
    minified,
    package_output,
)
from sift.ingest.gitignore import IgnoreRules, is_ignored, parse_spec

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 1024 * 1024
BINARY_SNIFF_BYTES = 8192
MAX_SKIPPED_PATHS = 1000

SKIP_IGNORED = "ignored"
SKIP_VENDORED = "vendored"
SKIP_BINARY = "binary"
SKIP_UNDECODABLE = "undecodable"
SKIP_BAD_NAME = "undecodable_name"
SKIP_TOO_LARGE = "too_large"
SKIP_SYMLINK_OUTSIDE = "symlink_outside"
SKIP_UNREADABLE = "unreadable"

VCS_DIRS = frozenset({".git", ".hg", ".svn"})

@dataclass(frozen=True, slots=True)
class WalkedFile:
    """One text file found by the walk: repo-relative POSIX path, decoded text and a hash of the raw bytes."""

    path: str
    abs_path: Path
    size: int
    text: str
    content_hash: str


@dataclass(slots=True)
class WalkStats:
    """Counts for one walk: files seen and yielded, and everything skipped by reason.

    Pruned directories are counted in ``skipped`` too, with a trailing ``/`` in ``skipped_paths``; files
    inside them are never seen.
    """

    files_seen: int = 0
    files_yielded: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    skipped_paths: list[tuple[str, str]] = field(default_factory=list)

    def skip(self, path: str, reason: str) -> None:
        """Record that ``path`` was left out for ``reason`` (paths list capped at MAX_SKIPPED_PATHS)."""
        self.skipped[reason] += 1
        if len(self.skipped_paths) < MAX_SKIPPED_PATHS:
            self.skipped_paths.append((path, reason))


def is_binary_bytes(head: bytes) -> bool:
    """Return True when the first 8 KiB of a file hold a NUL byte (git's own heuristic)."""
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def decode_text(data: bytes) -> str | None:
    """Decode UTF-8 (a leading BOM is stripped); return None when the bytes are not valid UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def walk(
    root: Path, *, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, stats: WalkStats | None = None,
    within: Path | None = None,
) -> Iterator[WalkedFile]:
    """Yield the repository's indexable text files under ``root``, sorted by path.

    With ``within``, the root's resolved path must lie inside that directory and is opened beneath it without
    following any symlink (OutsideRoot otherwise), so a root swapped for a symlink after it was checked is refused.
    """
    root_path = Path(root)
    if not root_path.exists():
        raise FileNotFoundError(f"repository root {root_path} does not exist; pass an existing directory")
    if not root_path.is_dir():
        raise NotADirectoryError(f"repository root {root_path} is not a directory; pass a directory")
    real = os.path.realpath(root_path)
    root_fd = open_confined(real, Path(within) if within is not None else None)
    walker = _Walker(Path(real), root_fd, max_file_bytes, stats if stats is not None else WalkStats())
    return walker.run()


@dataclass(slots=True)
class _Entry:
    """A directory entry after following an in-root symlink."""

    name: str
    abs_path: str
    is_dir: bool
    real_path: str  # the resolved path (inside the root): what is opened, and for directories cycle detection


@dataclass(frozen=True, slots=True)
class _Descend:
    """A subdirectory the walk enters next, with the ignore rules and resolved ancestors in force there."""

    abs_dir: str
    prefix: str
    rules: IgnoreRules
    ancestors: tuple[str, ...]
    fd: int | None = None  # the directory, already opened beneath the root


class _Walker:
    """State of one walk: root, limits and stats; per-directory state lives in generators on an explicit stack."""

    def __init__(self, root: Path, root_fd: int, max_file_bytes: int, stats: WalkStats) -> None:
        self.root = root
        self.root_real = str(root)
        self.root_fd = root_fd
        self.max_file_bytes = max_file_bytes
        self.stats = stats
        self.package_builds: dict[str, str] = {}  # a kept package output folder → the one build kept in it

    def run(self) -> Iterator[WalkedFile]:
        try:
            yield from self._run()
        finally:
            os.close(self.root_fd)

    def _open(self, real_path: str, *, directory: bool) -> int:
        return open_inside(self.root_fd, self.root_real, real_path, directory=directory)

    def _run(self) -> Iterator[WalkedFile]:
        rules: IgnoreRules = ()
        exclude = self._load_spec(os.path.realpath(os.path.join(self.root_real, ".git", "info", "exclude")))
        if exclude is not None:
            rules = (("", exclude),)
        # Depth-first over an explicit stack of per-directory generators: a directory yields its files and a
        # _Descend for each subdirectory, in path order, and the loop opens that subdirectory next.
        stack = [self._walk_dir(self.root_real, "", rules, (self.root_real,))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, _Descend):
                stack.append(self._walk_dir(item.abs_dir, item.prefix, item.rules, item.ancestors, item.fd))
            else:
                yield item

    def _load_spec(self, real_path: str) -> pathspec.GitIgnoreSpec | None:
        """A .gitignore-style file inside the root, parsed; None when it is missing, unreadable or empty."""
        try:
            fd = self._open(real_path, directory=False)
            with open(fd, "rb", closefd=True) as fh:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return None
                os.set_blocking(fd, True)
                data = fh.read(self.max_file_bytes + 1)
        except OSError:
            return None
        return parse_spec(real_path, data)

    def _walk_dir(
        self, abs_dir: str, prefix: str, rules: IgnoreRules, ancestors: tuple[str, ...], fd: int | None = None
    ) -> Iterator[WalkedFile | _Descend]:
        """Walk one directory; ``ancestors`` are the resolved paths from the root down to this directory."""
        here = DirHandle(self.root_fd, self.root_real, ancestors[-1], fd)
        try:
            with os.scandir(here.fd()) as it:
                raw = list(it)
        except OSError as exc:
            here.close()
            log.debug("cannot list %s: %s", _printable(abs_dir), exc)
            self.stats.skip(prefix or "./", SKIP_UNREADABLE)
            return
        names = {e.name for e in raw}
        if ".gitignore" in names:
            spec = self._load_spec(os.path.realpath(os.path.join(ancestors[-1], ".gitignore")))
            if spec is not None:
                rules = (*rules, (prefix, spec))
        entries: list[_Entry] = []
        for dir_entry in raw:
            if not _is_utf8(dir_entry.name):
                self._skip_bad_name(dir_entry, prefix)
                continue
            entry = self._classify(dir_entry, abs_dir, prefix, ancestors[-1])
            if entry is not None:
                entries.append(entry)
        # A trailing "/" on directory names makes sibling order equal to full-path string order.
        entries.sort(key=lambda e: e.name + "/" if e.is_dir else e.name)
        try:
            for entry in entries:
                rel = prefix + entry.name
                if entry.is_dir:
                    reason = self._dir_skip_reason(entry, rel, rules, names)
                    if reason is not None:
                        self.stats.skip(rel + "/", reason)
                    elif entry.real_path in ancestors:
                        log.debug("symlink cycle at %s, not followed", rel)
                    else:
                        child = self._open_child(here, entry.real_path)
                        here.close()  # one open directory at a time, however deep the tree
                        yield _Descend(entry.abs_path, rel + "/", rules, (*ancestors, entry.real_path), child)
                else:
                    walked = self._read_file(entry, rel, rules, here)
                    if walked is not None:
                        yield walked
        finally:
            here.close()

    def _skip_bad_name(self, dir_entry: os.DirEntry[str], prefix: str) -> None:
        """Count an entry whose name is not UTF-8 (a directory is pruned whole)."""
        try:
            is_dir = dir_entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if not is_dir:
            self.stats.files_seen += 1
        self.stats.skip(prefix + _printable(dir_entry.name) + ("/" if is_dir else ""), SKIP_BAD_NAME)

    def _classify(self, dir_entry: os.DirEntry[str], abs_dir: str, prefix: str, real_parent: str) -> _Entry | None:
        """Resolve symlinks (skipping those that leave the root) and tell directories from files."""
        path = os.path.join(abs_dir, dir_entry.name)
        try:
            if not dir_entry.is_symlink():
                is_dir = dir_entry.is_dir(follow_symlinks=False)
                return _Entry(dir_entry.name, path, is_dir, os.path.join(real_parent, dir_entry.name))
            real = os.path.realpath(os.path.join(real_parent, dir_entry.name))
            if not is_within(real, self.root_real):
                # The target is only stat'ed to label the skip; it is never opened or listed.
                if os.path.isdir(real):
                    self.stats.skip(prefix + dir_entry.name + "/", SKIP_SYMLINK_OUTSIDE)
                else:
                    self.stats.files_seen += 1
                    self.stats.skip(prefix + dir_entry.name, SKIP_SYMLINK_OUTSIDE)
                return None
            return _Entry(dir_entry.name, path, os.path.isdir(real), real)
        except OSError as exc:
            log.debug("cannot stat %s: %s", path, exc)
            self.stats.files_seen += 1
            self.stats.skip(prefix + dir_entry.name, SKIP_UNREADABLE)
            return None

    def _dir_skip_reason(
        self, entry: _Entry, rel: str, rules: IgnoreRules, sibling_names: set[str]
    ) -> str | None:
        name = entry.name
        if name in VCS_DIRS or is_ignored(rules, rel, is_dir=True):
            return SKIP_IGNORED
        parent = os.path.dirname(entry.abs_path)
        if self.package_builds.get(parent, name) != name:
            return SKIP_VENDORED  # another build of a kept package output (dist/cjs beside the kept dist/esm)
        if name in VENDORED_DIRS or name.endswith(".egg-info"):
            # A published package's dist/ that its package.json points into, with no sources beside it, is its code.
            part = package_output(name, parent, sibling_names)
            if part is None:
                return SKIP_VENDORED
            if part:
                self.package_builds[entry.abs_path] = part
        if name == "target" and not sibling_names.isdisjoint(BUILD_TARGET_MARKERS):
            return SKIP_VENDORED
        if os.path.exists(os.path.join(entry.abs_path, "pyvenv.cfg")):
            return SKIP_VENDORED  # a virtualenv under any name (env, .env311, ...)
        return None

    def _open_child(self, here: DirHandle, real: str) -> int | None:
        """A subdirectory's descriptor, opened from its parent's when it lies right there (so a deep tree costs one
        open per level); None lets the subdirectory open itself from the root (and fail there, if it must)."""
        if os.path.dirname(real) != here.real:
            return None
        try:
            return open_beneath(here.fd(), os.path.basename(real), directory=True)
        except OSError:
            return None

    def _read_file(self, entry: _Entry, rel: str, rules: IgnoreRules, here: DirHandle) -> WalkedFile | None:
        stats = self.stats
        stats.files_seen += 1
        reason = _file_skip_reason(entry.name, rel, rules)
        if reason is not None:
            stats.skip(rel, reason)
            return None
        try:
            if os.path.dirname(entry.real_path) == here.real:  # beside the listing: one openat from it
                fd = open_beneath(here.fd(), os.path.basename(entry.real_path), directory=False)
            else:
                fd = self._open(entry.real_path, directory=False)
            with open(fd, "rb", closefd=True) as fh:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    # FIFOs, sockets and devices: reading one could block or never end.
                    stats.skip(rel, SKIP_UNREADABLE)
                    return None
                if st.st_size > self.max_file_bytes:
                    stats.skip(rel, SKIP_TOO_LARGE)
                    return None
                os.set_blocking(fd, True)
                data = fh.read(self.max_file_bytes + 1)
        except OSError as exc:
            log.debug("cannot read %s: %s", rel, exc)
            stats.skip(rel, SKIP_UNREADABLE)
            return None
        if len(data) > self.max_file_bytes:  # grew after the stat
            stats.skip(rel, SKIP_TOO_LARGE)
            return None
        if is_binary_bytes(data):
            stats.skip(rel, SKIP_BINARY)
            return None
        text = decode_text(data)
        if text is None:
            stats.skip(rel, SKIP_UNDECODABLE)
            return None
        if minified(entry.name, text):
            stats.skip(rel, SKIP_VENDORED)
            return None
        stats.files_yielded += 1
        return WalkedFile(
            path=rel,
            abs_path=self.root / rel,
            size=len(data),
            text=text,
            content_hash=hashlib.sha256(data).hexdigest(),
        )


def _file_skip_reason(name: str, rel: str, rules: IgnoreRules) -> str | None:
    """The reason a file is skipped by name alone (no I/O), or None."""
    if is_ignored(rules, rel, is_dir=False):
        return SKIP_IGNORED
    if name in LOCK_FILES or name.endswith(MINIFIED_SUFFIXES):
        return SKIP_VENDORED
    if os.path.splitext(name)[1].lower() in BINARY_EXTENSIONS:
        return SKIP_BINARY
    return None


def _is_utf8(name: str) -> bool:
    """Whether a name from ``os.scandir`` was valid UTF-8 (undecodable bytes arrive as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _printable(name: str) -> str:
    """``name`` with undecodable bytes written as ``\\xNN`` (safe to store, log and show)."""
    return os.fsencode(name).decode("utf-8", errors="backslashreplace")


__all__: Sequence[str] = (
    "WalkStats",
    "WalkedFile",
    "decode_text",
    "is_binary_bytes",
    "walk",
)
