"""The LLM boundary parser over real HTTP: the real ChatOpenAI client against the scripted stand-in server."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from sift.cli.ingest import format_summary
from sift.config import Settings
from sift.db import open_database, visible_in
from sift.db.tables import File, KnowledgeBase, Node
from sift.ingest.parsers.llm import LLMParserOptions
from sift.ingest.pipeline import ingest
from tests.llm_server import ScriptedLLM

QUEUE_LUA = """-- Queue helpers.
local Queue = {}
Queue.__index = Queue

function Queue.new()
  return setmetatable({items = {}}, Queue)
end

function Queue:push(item)
  table.insert(self.items, item)
end

local function helper(x)
  return x * 2
end

return Queue
"""
GOOD = [
    {"name": "Queue.new", "kind": "function", "start_line": 5, "end_line": 7},
    {"name": "Queue:push", "kind": "function", "start_line": 9, "end_line": 11},
    {"name": "helper", "kind": "function", "start_line": 13, "end_line": 15},
]
EXPECTED = [("Queue.new", "function", 5, 7), ("Queue:push", "function", 9, 11), ("helper", "function", 13, 15)]
FAST = LLMParserOptions(backoff_s=0.01)


def _repo(base: Path, files: dict[str, str]) -> Path:
    repo = base / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def _settings(base: Path, llm: ScriptedLLM, timeout_s: float = 5.0) -> Settings:
    return Settings(data_dir=base / "data", llm_base_url=llm.base_url, llm_model="stand-in", llm_api_key="test",
                    llm_timeout_s=timeout_s)


def _run(tmp_path: Path, steps: list[Any], files: dict[str, str] | None = None, kb: str = "k",
         options: LLMParserOptions = FAST, timeout_s: float = 5.0, default: Any = None):
    repo = _repo(tmp_path, files or {"lib/queue.lua": QUEUE_LUA, "pkg/a.py": "def f():\n    return 1\n"})
    with ScriptedLLM(steps, default=default) as llm:
        settings = _settings(tmp_path, llm, timeout_s)
        summary = ingest(settings, repo, kb, build_index=False, llm_parser=options)
    return summary, llm.requests, settings


def _file(settings: Settings, path: str, kb: str = "k") -> tuple[Any, list[tuple[str, str, int, int]]]:
    engine = open_database(settings)
    with engine.connect() as conn:
        kb_row = conn.execute(select(KnowledgeBase).where(KnowledgeBase.name == kb)).one()
        f = conn.execute(select(File).where(File.kb_id == kb_row.id, File.path == path,
                                            visible_in(File, kb_row.current_generation))).one()
        nodes = conn.execute(select(Node.name, Node.kind, Node.start_line, Node.end_line)
                             .where(Node.file_id == f.id, Node.level > 0).order_by(Node.start_line)).all()
    return f, [tuple(n) for n in nodes]


def test_llm_parser_correct_answer_becomes_nodes(tmp_path: Path) -> None:
    summary, requests, settings = _run(tmp_path, [{"content": {"items": GOOD}}])
    f, nodes = _file(settings, "lib/queue.lua")
    assert (f.parser, f.parse_error, nodes) == ("llm", None, EXPECTED)
    assert _file(settings, "pkg/a.py")[0].parser == "tree-sitter"  # a grammar exists: no LLM call
    assert len(requests) == 1
    prompt = requests[0]["messages"][-1]["content"]
    assert "File: lib/queue.lua (language: lua, 17 lines)" in prompt and "5| function Queue.new()" in prompt
    assert requests[0]["response_format"]["type"] == "json_schema"
    llm = summary["llm_parser"]
    assert (llm["files"], llm["calls"], llm["tokens"], llm["items"], llm["dropped_total"]) == (1, 1, 15, 3, 0)
    assert "llm parser 1 files: 1 calls, 15 tokens" in format_summary(summary)


def test_llm_parser_drops_hallucinated_ranges(tmp_path: Path) -> None:
    bad = [
        {"name": "ghost", "kind": "function", "start_line": 40, "end_line": 60},  # past the end of the file
        {"name": "helper", "kind": "function", "start_line": 2, "end_line": 4},  # name nowhere near line 2
        {"name": "Queue:push", "kind": "function", "start_line": 11, "end_line": 9},  # reversed
        {"name": "push", "kind": "function", "start_line": 6, "end_line": 10},  # crosses Queue.new's end
        {"name": "helper", "kind": "function", "start_line": 13, "end_line": 14},  # a second answer for helper
        {"name": "Queue", "kind": "sandwich", "start_line": 2, "end_line": 17},  # not a definition kind
    ]
    summary, _, settings = _run(tmp_path, [{"content": {"items": GOOD + bad}}])
    f, nodes = _file(settings, "lib/queue.lua")
    assert (f.parser, nodes) == ("llm", EXPECTED)
    assert summary["llm_parser"]["dropped"] == {"duplicate": 1, "kind": 1, "name_not_near_start": 1,
                                                "out_of_file": 1, "overlaps_sibling": 1, "reversed": 1}
    assert summary["failures"] == []


@pytest.mark.parametrize(
    ("replies", "parser", "retries", "fallbacks"),
    [
        (["not json", "{\"items\": [", "[1, 2"], "text", 2, {"invalid_answer": 1}),
        (["Sure! Here are the functions:", None], "llm", 1, {}),
    ],
)
def test_llm_parser_invalid_json_is_retried_then_flat(tmp_path: Path, replies, parser, retries, fallbacks) -> None:
    steps = [{"raw": r} if r is not None else {"content": {"items": GOOD}} for r in replies]
    summary, requests, settings = _run(tmp_path, steps)
    f, nodes = _file(settings, "lib/queue.lua")
    assert len(requests) == len(replies) and f.parser == parser
    assert nodes == (EXPECTED if parser == "llm" else [])
    assert (summary["llm_parser"]["retries"], summary["llm_parser"]["fallbacks"]) == (retries, fallbacks)
    if parser == "text":
        assert f.parse_error.startswith("llm: InvalidAnswer")
        assert summary["failures"] == [{"path": "lib/queue.lua", "error": f.parse_error}]


def test_llm_parser_timeout_falls_back_to_flat_text(tmp_path: Path) -> None:
    started = time.perf_counter()
    summary, requests, settings = _run(tmp_path, [{"hang": 1.5}, {"hang": 1.5}], timeout_s=0.3,
                                       options=LLMParserOptions(retries=1, backoff_s=0.01))
    assert time.perf_counter() - started < 5
    f, nodes = _file(settings, "lib/queue.lua")
    assert (f.parser, nodes, len(requests)) == ("text", [], 2)
    assert summary["llm_parser"]["fallbacks"] == {"timeout": 1} and "Timeout" in f.parse_error


def test_llm_parser_cache_hit_on_reingest_makes_no_calls(tmp_path: Path) -> None:
    _run(tmp_path, [{"content": {"items": GOOD}}], kb="first")
    summary, requests, settings = _run(tmp_path, [], kb="second")  # any call would get a scripted 500
    assert requests == []
    assert (summary["llm_parser"]["cached"], summary["llm_parser"]["calls"]) == (1, 0)
    assert _file(settings, "lib/queue.lua", kb="second")[1] == EXPECTED


def test_llm_parser_forced_glob_and_budget(tmp_path: Path) -> None:
    """A glob forces the LLM on any file; once the token budget is spent the remaining files are flat text."""
    small = "def ok():\n    return 1\n"
    big = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(40))
    files = {"a.foo": small, "b.foo": big, "c.foo": small.replace("1", "2"), "d.py": small}
    answer = {"content": {"items": [{"name": "ok", "kind": "function", "start_line": 1, "end_line": 2}]}}
    options = LLMParserOptions(globs=("*.foo",), token_budget=600, concurrency=1, backoff_s=0.01)
    summary, requests, settings = _run(tmp_path, [answer], files=files, options=options)
    assert len(requests) == 1
    assert [_file(settings, p)[0].parser for p in files] == ["llm", "text", "text", "tree-sitter"]
    llm = summary["llm_parser"]
    assert (llm["budget_exhausted"], llm["fallbacks"], summary["failures"]) == (True, {"budget": 2}, [])
    assert "token budget 600 spent" in format_summary(summary)


def test_llm_parser_concurrency_limit(tmp_path: Path) -> None:
    files = {f"m{i}.lua": f"local function f{i}()\n  return {i}\nend\n" for i in range(6)}
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        i = re.search(r"File: m(\d)\.lua", body["messages"][-1]["content"]).group(1)
        return {"content": {"items": [{"name": f"f{i}", "kind": "function", "start_line": 1, "end_line": 3}]}}

    options = LLMParserOptions(concurrency=2, backoff_s=0.01)
    summary, requests, settings = _run(tmp_path, [], files=files, options=options, default=slow)
    assert len(requests) == 6 and state["max"] == 2
    assert summary["parse_seconds"] < 6 * 0.3
    assert all(_file(settings, p)[1] == [(f"f{p[1]}", "function", 1, 3)] for p in files)


def test_llm_parser_long_file_windows_merge(tmp_path: Path) -> None:
    """Windows of 12 lines with overlap 4; the oracle answers only what each excerpt shows."""
    body = "".join(f"    x{i} = {i}\n" for i in range(20))
    text = f"class Big:\n{body}    def tail(self):\n        return 0\n\ndef after():\n    return 1\n"
    truth = [("Big", "class", 1, 23), ("tail", "method", 22, 23), ("after", "function", 25, 26)]

    def oracle(req: dict[str, Any]) -> dict[str, Any]:
        prompt = req["messages"][-1]["content"]
        a, b = map(int, re.search(r"Excerpt: lines (\d+)-(\d+)", prompt).groups())
        still_open = set(re.findall(r"(\w+) \(\w+, from line \d+\)", prompt))
        items = [{"name": n, "kind": k, "start_line": s, "end_line": min(e, b)}
                 for n, k, s, e in truth if a <= s <= b or n in still_open]
        return {"content": {"items": items}}

    options = LLMParserOptions(window_lines=12, overlap_lines=4, backoff_s=0.01)
    summary, requests, settings = _run(tmp_path, [], files={"big.foo": text},
                                       options=LLMParserOptions(**{**options.__dict__, "globs": ("*.foo",)}),
                                       default=oracle)
    assert len(requests) == 3
    assert _file(settings, "big.foo")[1] == truth
    assert summary["llm_parser"]["dropped_total"] == 0


def test_llm_parser_cli_glob_and_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from sift.cli import main

    repo = _repo(tmp_path, {"q.foo": QUEUE_LUA})
    args = ["ingest", str(repo), "--kb", "k", "--no-index", "--data-dir", str(tmp_path / "data")]
    for name in ("SIFT_LLM_BASE_URL", "SIFT_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    assert main([*args, "--parser", "llm"]) == 2
    with ScriptedLLM([{"content": {"items": GOOD}}]) as llm:
        monkeypatch.setenv("SIFT_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("SIFT_LLM_MODEL", "stand-in")
        assert main([*args, "--llm-parser-glob", "*.foo"]) == 0
    out = capsys.readouterr().out
    assert "llm parser 1 files: 1 calls, 15 tokens, cached 0, dropped 0 items, flat-text fallbacks: none" in out
