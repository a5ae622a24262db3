"""Opening paths inside a directory without trusting path strings: ``openat`` one component at a time with
``O_NOFOLLOW``, from a descriptor opened once. A directory swapped for a symlink after a check is never followed:
the open fails (ELOOP or ENOTDIR) instead of reading where the symlink points."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sift.errors import OutsideRoot


def is_within(path: str, root: str) -> bool:
    """Whether the (resolved) ``path`` is ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def open_confined(path: str, within: Path | None) -> int:
    """A directory descriptor for the resolved ``path``, opened beneath ``within`` (when given) one component at a
    time without following symlinks; OutsideRoot when ``path`` is not inside ``within`` or changed on the way."""
    if within is None:
        return os.open(path, _DIR_FLAGS)
    base = os.path.realpath(within)
    if not is_within(path, base):
        raise OutsideRoot(f"{path!r} is outside the allowed root {base!r} (a symlink in its path leads out); "
                          "nothing was read", field="path")
    base_fd = os.open(base, _DIR_FLAGS)
    try:
        return open_beneath(base_fd, os.path.relpath(path, base), directory=True)
    except OSError as exc:
        raise OutsideRoot(f"{path!r} changed while it was opened (a directory on its way became a symlink or "
                          f"vanished: {exc.strerror}); nothing was read", field="path") from exc
    finally:
        os.close(base_fd)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def open_beneath(base_fd: int, rel: str, *, directory: bool) -> int:
    """Open ``rel`` (a path without symlinks, relative to ``base_fd``) one component at a time, never following a
    symlink (``O_NOFOLLOW``: a component that is one fails with ELOOP or ENOTDIR). Files open non-blocking, so a
    FIFO swapped in cannot hang the walk."""
    parts = [p for p in rel.split(os.sep) if p and p != "."]
    if ".." in parts:
        raise OSError(22, "a '..' component", rel)
    fd = os.dup(base_fd)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = (_DIR_FLAGS if directory or not last else os.O_RDONLY | os.O_NONBLOCK) | _NOFOLLOW
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_inside(root_fd: int, root_real: str, real_path: str, *, directory: bool) -> int:
    """Open a resolved path inside the root (``root_fd``, opened at ``root_real``), following no symlink."""
    if not is_within(real_path, root_real):
        raise OSError(1, "outside the root", real_path)
    return open_beneath(root_fd, os.path.relpath(real_path, root_real), directory=directory)


class DirHandle:
    """A directory inside the root, opened beneath it on demand (and again after :meth:`close`)."""

    def __init__(self, root_fd: int, root_real: str, real: str, fd: int | None = None) -> None:
        self.root_fd = root_fd
        self.root_real = root_real
        self.real = real
        self._fd = fd

    def fd(self) -> int:
        """The open descriptor (opened from the root now if it is closed)."""
        if self._fd is None:
            self._fd = open_inside(self.root_fd, self.root_real, self.real, directory=True)
        return self._fd

    def close(self) -> None:
        """Close the descriptor, if open."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def confining_root(root: Path, roots: Sequence[str] | None) -> Path | None:
    """The one of ``roots`` that the resolved ``root`` lies in (None without roots); OutsideRoot when none."""
    if not roots:
        return None
    real = os.path.realpath(root)
    for allowed in roots:
        if is_within(real, os.path.realpath(allowed)):
            return Path(allowed)
    raise OutsideRoot(f"{str(root)!r} now resolves to {real!r}, outside the allowed roots ({', '.join(roots)}): "
                      "a symlink leads out of them; nothing was read", field="path")
