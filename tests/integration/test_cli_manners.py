"""The CLI's manners: safe terminal output, exact JSON, exit codes, quick failures, closed pipes, quiet progress.

One small repository with hostile file names and content is ingested once through the real ``sift`` console
script (the module fixture); the tests run commands against it in-process (``main``) or as fresh processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import sift.cli
from sift.cli import main
from sift.config import Settings
from sift.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
SIFT = Path(sys.executable).with_name("sift")
KB = "hostile"

ESC_NAME = "pkg/evil\x1b]0;pwned\x07.py"  # sets the terminal title when printed raw
RTL_NAME = "docs/gnp.\u202etxt.md"  # reads as "docs/gnp.dm.txt" when printed raw
NL_NAME = "docs/two\nlines.md"  # forges a second output line when printed raw
HOSTILE = {
    ESC_NAME: (
        "def pwned_title():\n"
        '    """Sets the title \x1b]0;owned\x07 and clears \x1b[2J the screen: pwned."""\n'
        '    return "\x1b[31mred\x1b[0m"\n'
    ),
    RTL_NAME: "# Reversed \u202e name\n\nThe pwned guide keeps \x1b[2J tokens here.\n",
    NL_NAME: "# Forged\n\nA pwned line break in a name.\n",
    "pkg/ok.py": 'def validate_token(token: str) -> bool:\n    """Check a token."""\n    return bool(token)\n',
}
RAW = ("\x1b", "\x07", "\u202e", "\x9b")
HEAVY = ("torch", "sentence_transformers", "transformers", "faiss", "langgraph", "langchain_core", "litestar")


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_") or k == "SIFT_DATABASE_URL"}
    return {**env, "SIFT_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile repository ingested by ``sift ingest`` in a child process whose stderr is a pipe."""
    base = tmp_path_factory.mktemp("manners")
    repo = base / "repo"
    for rel, text in HOSTILE.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    data = base / "data"
    out = subprocess.run([str(SIFT), "ingest", str(repo), "--kb", KB, "--json"], env=_env(data),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    # stderr is not a terminal: no progress bars, no "Loading weights" from the model loader; at most a plain
    # progress line every ~10 s (a run this small usually prints none).
    assert all(line.startswith("ingest: ") for line in out.stderr.splitlines()), out.stderr
    assert "\x1b" not in out.stderr and "\r" not in out.stderr
    assert json.loads(out.stdout)["files"] == len(HOSTILE)
    return data


def _run(capsys: pytest.CaptureFixture[str], data_dir: Path, *args: str) -> tuple[int, str, str]:
    code = main([*args, "--data-dir", str(data_dir)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_safe(text: str) -> None:
    assert not any(ch in text for ch in RAW), ascii(text[:500])
    assert not any(line.startswith("lines.md") for line in text.splitlines())  # no forged line


@pytest.mark.parametrize("args", [
    ("search", "pwned", "--kb", KB, "--channel", "bm25"),
    ("search", "pwned", "--kb", KB, "--channel", "bm25", "--format", "grep"),
    ("docql", "$.files", "--kb", KB),
    ("docql", "$.files", "--kb", KB, "--format", "grep"),
    ("docql", '$.content.grep("pwned")', "--kb", KB),
    ("docql", '$.code.function("pwned_title")', "--kb", KB),
    ("files", "--kb", KB, ESC_NAME),
])
def test_cli_human_output_escapes_repository_text(capsys, data_dir: Path, args: tuple[str, ...]) -> None:
    code, out, err = _run(capsys, data_dir, *args)
    assert code == 0, err
    _assert_safe(out + err)
    assert "\\x1b" in out or "\\u202e" in out or "\\n" in out  # shown, not dropped


def test_cli_search_grep_shows_each_name_escaped_on_one_line(capsys, data_dir: Path) -> None:
    code, out, _ = _run(capsys, data_dir, "docql", "$.files", "--kb", KB, "--format", "grep")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == len(HOSTILE)
    assert "docs/two\\nlines.md:1: two\\nlines.md" in lines
    assert any(line.startswith("pkg/evil\\x1b]0;pwned\\x07.py:1: ") for line in lines)
    assert any(line.startswith("docs/gnp.\\u202etxt.md:1: ") for line in lines)


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_cli_json_keeps_the_exact_strings(capsys, data_dir: Path, fmt: str) -> None:
    code, out, _ = _run(capsys, data_dir, "search", "pwned title guide line", "--kb", KB, "--channel", "bm25",
                        "-k", "20", "--format", fmt)
    assert code == 0
    _assert_safe(out)  # JSON writes them as \u escapes, so even JSON on a terminal cannot drive it
    hits = json.loads(out)["hits"] if fmt == "json" else [json.loads(line) for line in out.splitlines()]
    assert {ESC_NAME, RTL_NAME, NL_NAME} <= {h["path"] for h in hits}
    if fmt == "jsonl":
        snippet = next(h["snippet"] for h in hits if h["path"] == ESC_NAME and h["type"] == "function")
        assert "\x1b]0;owned\x07" in snippet and "\x1b[2J" in snippet


def test_cli_ask_escapes_text_and_json_round_trips(capsys, data_dir: Path) -> None:
    code, out, err = _run(capsys, data_dir, "ask", "What does pwned_title return?", "--kb", KB)
    assert code == 0, err
    _assert_safe(out + err)
    assert "pwned_title" in out and "\\x1b" in out
    code, out, err = _run(capsys, data_dir, "ask", "What does pwned_title return?", "--kb", KB, "--json")
    assert code == 0, err
    _assert_safe(out)
    answer = json.loads(out)
    assert ESC_NAME in {c["path"] for c in answer["citations"]}
    assert "\x1b" in answer["text"] and answer["degraded_reasons"] == []


def test_cli_kb_show_prints_for_people_and_json_for_machines(capsys, data_dir: Path) -> None:
    code, out, _ = _run(capsys, data_dir, "kb", "show", KB)
    assert code == 0
    assert "{" not in out and "'" not in out  # no Python dict
    assert re.search(r"^\s+1\s+published\s", out, re.M) and "+4 ~0 -0 files" in out
    code, out, _ = _run(capsys, data_dir, "kb", "show", KB, "--json")
    info = json.loads(out)
    assert (info["name"], info["files"], info["generations"][0]["stats"]["added"]) == (KB, 4, 4)


def test_cli_version(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert re.fullmatch(r"sift \S+\n", capsys.readouterr().out)


# --- exit codes ---------------------------------------------------------------------------------------------

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_cli_readme_exit_code_table_matches_the_cli() -> None:
    section = README.split("### Exit codes", 1)[1].split("\n\n", 2)[1]
    documented = {int(m) for m in re.findall(r"^\| (\d+) \|", section, re.M)}
    defined = {v for k, v in vars(sift.cli).items() if k.startswith("EXIT_")}
    assert documented == defined == {0, 1, 2, 70, 130, 141}


def test_cli_usage_error_exits_2(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["search", "q", "--kb", KB, "--no-such-flag"])
    assert exc.value.code == 2
    assert main(["eval", "compare", "only-one.json"]) == 2


@pytest.mark.parametrize(("raised", "code", "message"), [
    (KeyboardInterrupt(), 130, "interrupted"),
    (RuntimeError("boom"), 70, "internal error"),
])
def test_cli_interrupt_and_internal_error_codes(monkeypatch, capsys, data_dir: Path, raised: BaseException,
                                                code: int, message: str) -> None:
    def fail(_args: Any) -> int:
        raise raised

    monkeypatch.setattr("sift.cli.kb.run_list", fail)
    assert main(["kb", "list", "--data-dir", str(data_dir)]) == code
    assert message in capsys.readouterr().err


RUNNER = (
    "import json, sys\n"
    "from sift.cli import main\n"
    "code = main(sys.argv[1:])\n"
    f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
    "print('\\nRESULT ' + json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
)


def _fresh(data_dir: Path, *args: str) -> tuple[dict[str, Any], str]:
    out = subprocess.run([sys.executable, "-c", RUNNER, *args], env=_env(data_dir), capture_output=True, text=True,
                         timeout=120, cwd=data_dir)
    result = json.loads(out.stderr.rsplit("RESULT ", 1)[1])
    return result, out.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (("search", "token", "--kb", "nope"), "'nope' does not exist"),
    (("search", "   ", "--kb", KB), "query is empty"),
    (("ask", "", "--kb", KB), "question is empty"),
    (("ask", "where is the token checked?", "--kb", "nope"), "'nope' does not exist"),
    (("docql", "$.toc[?(@.level = 1)]", "--kb", KB), "column 17"),
    (("eval", "missing.jsonl", "--kb", KB), "does not exist"),
    (("ingest", "missing-dir", "--kb", "x"), "does not exist"),
])
def test_cli_user_errors_exit_1_before_anything_heavy_loads(data_dir: Path, args: tuple[str, ...],
                                                            fragment: str) -> None:
    result, err = _fresh(data_dir, *args)
    assert result["code"] == 1 and fragment in err
    assert result["heavy"] == [], "loaded before the error was reported"


@pytest.mark.parametrize("args", [("kb", "list"), ("kb", "show", KB), ("docql", "$.toc", "--kb", KB)])
def test_cli_light_commands_import_no_model_index_or_graph(data_dir: Path, args: tuple[str, ...]) -> None:
    result, err = _fresh(data_dir, *args)
    assert result == {"code": 0, "heavy": []}, err


def test_cli_keyword_search_imports_no_model_or_graph(data_dir: Path) -> None:
    result, err = _fresh(data_dir, "search", "token", "--kb", KB, "--channel", "bm25")
    assert result == {"code": 0, "heavy": ["faiss"]}, err  # the indexes, and nothing for the vector channel


def test_cli_import_is_light() -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, sift.cli; sift.cli.build_parser(); "
                          "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                          "('sqlalchemy', 'numpy', 'pydantic_settings', 'alembic', *" + repr(HEAVY) + ")))"],
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_cli_closed_stdout_exits_quietly(data_dir: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes a byte, like `| head` after one line
    try:
        proc = subprocess.run([str(SIFT), "docql", "$.toc", "--kb", KB, "--format", "jsonl"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=_env(data_dir), timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141
    assert proc.stderr == ""


def test_cli_head_of_a_pipeline_is_quiet(data_dir: Path) -> None:
    out = subprocess.run(["bash", "-c", f"'{SIFT}' docql '$.toc' --kb {KB} --format grep | head -n 1"],
                         capture_output=True, text=True, env=_env(data_dir), timeout=120)
    assert out.returncode == 0 and out.stdout.count("\n") == 1
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr


# --- ingest progress ----------------------------------------------------------------------------------------


def test_ingest_progress_has_totals_and_moves_per_embedding_call(tmp_path: Path, local_embedder) -> None:
    from sift.ingest.index import EMBED_STEP

    repo = tmp_path / "many"
    (repo / "pkg").mkdir(parents=True)
    for f in range(3):
        (repo / "pkg" / f"m{f}.py").write_text("".join(
            f"def f{f}_{i}(x):\n    \"\"\"Step {i} of module {f}.\"\"\"\n    return x + {i}\n\n\n" for i in range(60)))
    calls: list[tuple[str, int, int | None]] = []
    ingest(Settings(data_dir=tmp_path / "data"), repo, "many", embedder=local_embedder,
           progress=lambda phase, done, total: calls.append((phase, done, total)))
    phases = list(dict.fromkeys(p for p, _, _ in calls))
    # the model was given: no load phase; the keyword index is published before the embedding starts
    assert phases == ["walk", "parse", "searchable", "embed", "index"]
    assert [(d, t) for p, d, t in calls if p == "searchable"] == [(1, 1)]
    assert [d for p, d, _ in calls if p == "walk"] == [1, 2, 3]
    assert {t for p, _, t in calls if p == "parse"} == {3}
    embed = [(d, t) for p, d, t in calls if p == "embed"]
    total = embed[0][1]
    assert embed[0][0] == 0 and total > EMBED_STEP and embed[-1] == (total, total)
    steps = [b - a for (a, _), (b, _) in zip(embed, embed[1:], strict=False)]
    assert steps and max(steps) <= EMBED_STEP and all(t == total for _, t in embed)
