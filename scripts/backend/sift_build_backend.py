"""setuptools' build backend, quiet about the editable install's layout note.

An editable install of a package-dir mapping goes through setuptools' meta path finder, which always ends with a
warning that a folder named like the package in the working directory may shadow it; pip 25+ prints it on every
``pip install -e .``, even with ``-q``. Here it is noise: the folder ``sift/`` *is* the package's core, so an import
from the checkout finds the same ``sift`` (its layer subpackages then come through the finder). Only that note is
filtered (matched by its text, which every setuptools since the finder's introduction words the same way);
everything else is ``setuptools.build_meta`` unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403 - every other hook is setuptools' own

_LAYOUT_NOTE = r"(?s).*folders in your working directory with the same\s+name as your package"


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """``setuptools.build_meta.build_editable``, without the editable layout note."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_LAYOUT_NOTE, category=UserWarning)
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
