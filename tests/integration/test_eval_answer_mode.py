"""`sift eval --mode answer` through the real graph on a real index of the tiny repository."""

from __future__ import annotations

import asyncio
import json

from sift.cli import main
from sift.config import Settings
from sift.ingest.pipeline import ingest


def test_cli_eval_answer_mode_runs_the_graph(tiny_repo, tmp_path, local_embedder, capsys):
    settings = Settings(data_dir=tmp_path / "data")
    ingest(settings, tiny_repo, "tiny", embedder=local_embedder)
    qs = tmp_path / "q.jsonl"
    qs.write_text("\n".join(json.dumps(q) for q in [
        {"id": "where", "query": "Where is the token validated?", "kind": "locate",
         "gold_spans": [{"path": "pkg/auth.py", "start_line": 12, "end_line": 14}],
         "answer_contains": ["validate_token"]},
        {"id": "neg", "query": "How do I configure the Kubernetes operator's autoscaling?", "kind": "negative"},
    ]) + "\n")
    code = main(["eval", str(qs), "--kb", "tiny", "--mode", "answer", "--format", "json", "--concurrency", "2",
                 "--out", str(tmp_path / "out"), "--name", "run", "--data-dir", str(settings.data_dir)])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["aggregate"]["errors"] == 0
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    by_id = {q["id"]: q for q in run["questions"]}
    assert by_id["where"]["metrics"]["answer_hit"] == 1.0
    assert by_id["where"]["metrics"]["citation_precision"] > 0
    assert by_id["neg"]["metrics"]["not_found_accuracy"] == 1.0
    assert by_id["neg"]["metrics"]["citation_count"] == 0
    # Each question ran on a thread of its own that no one can follow up: the run leaves no checkpoint behind
    # (in the SQLite file or the PostgreSQL tables, whichever the settings name).
    assert asyncio.run(_checkpoints(settings)) == 0


async def _checkpoints(settings: Settings) -> int:
    from sift.graph.checkpointer import open_checkpointer

    async with open_checkpointer(settings) as saver:
        return len([c async for c in saver.alist(None)])
