"""Helpers shared by CLI commands: common options and Settings built from them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sift.config import Settings


def add_common(p: argparse.ArgumentParser) -> None:
    """Options every command that touches a data directory takes."""
    p.add_argument("--data-dir", type=Path, default=None, help="data directory (default: $SIFT_DATA_DIR or ./.sift)")


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the environment, with command-line overrides applied."""
    from sift.config import Settings  # pydantic-settings: not needed to parse arguments or print --help

    overrides = {}
    if getattr(args, "data_dir", None) is not None:
        overrides["data_dir"] = args.data_dir
    return Settings(**overrides)

