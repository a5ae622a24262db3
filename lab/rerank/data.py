"""The cross-encoder's fitting data: every pooled question's candidates as the texts the reranker will read.

Reads the pool ``lab/rerank/pool.py`` writes (``bench/out/rerank/pool.npz``: for each train and written
question, the candidates fused search's channels retrieved, their features and gold labels), and writes
``bench/out/rerank/groups.jsonl``: one line per question with its project, its kind of pair, the question, and
per candidate (the ``KEEP`` the committed ranker scores highest, and every one touching a gold span) its span,
gold label, fused score and passage text (``encoder.passage``:
path, first line and the lines that hold the question's words, within the model's window).

The mined questions' sentences are blanked out of their targets first (``lab/train/cloze.py``), as in the
inverse-cloze copies: a mined question is a sentence of its own target, and a model that saw it there would learn
to find copied words rather than answers. Written questions read the files as published.

    .venv/bin/python lab/rerank/data.py        # after lab/rerank/pool.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT,):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

OUT = ROOT / "bench" / "out" / "rerank"
GROUPS = OUT / "groups.jsonl"
MAX_TOKENS = 128  # the whole input: [CLS] question [SEP] passage [SEP]
QUESTION_TOKENS = 32
KEEP = 40  # candidates per question, best fused first (and every one touching a gold span)
LAYERS = 4  # of MiniLM's six: 20 candidates within ~300 ms on 2 cores (lab/rerank/README.md)


def info() -> Any:
    from lab.rerank.encoder import RerankerInfo

    return RerankerInfo(LAYERS, MAX_TOKENS, QUESTION_TOKENS, "all-MiniLM-L6-v2", {})


class Sources:
    """File texts by (project, path), the mined questions' sentences blanked in train packages."""

    def __init__(self, train: list[dict]) -> None:
        from bench.retrieval import source_root
        from lab.train.make_pairs import fetch, load_packages

        self.roots: dict[str, Path] = {}
        self._fetch = {p["name"]: (lambda p=p: fetch(p)) for p in load_packages()}
        self._source_root = source_root
        self._train = {}
        for q in train:
            self._train.setdefault(q["kb"], []).append(q)
        self._changed: dict[str, dict[str, str]] = {}
        self._cache: dict[tuple[str, str], list[str] | None] = {}

    def root(self, kb: str) -> Path:
        if kb not in self.roots:
            self.roots[kb] = self._fetch[kb]() if kb in self._fetch else self._source_root(kb)
            if kb in self._train:
                self._changed[kb] = self._blanked(kb)
        return self.roots[kb]

    def _blanked(self, kb: str) -> dict[str, str]:
        from lab.train.cloze import CLOZE_SOURCES, cloze_questions

        questions = self._train[kb]
        paths = sorted({q["gold_spans"][0]["path"] for q in questions if q["source"] in CLOZE_SOURCES})
        files = {}
        for path in paths:
            try:
                files[path] = (self.roots[kb] / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        changed, _ = cloze_questions(files, questions)
        return changed

    def lines(self, kb: str, path: str) -> list[str] | None:
        key = (kb, path)
        if key not in self._cache:
            root = self.root(kb)
            text = self._changed.get(kb, {}).get(path)
            if text is None:
                try:
                    text = (root / path).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    text = None
            self._cache[key] = None if text is None else text.split("\n")
        return self._cache[key]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args()
    import numpy as np
    from tokenizers import Tokenizer

    from lab.fit import ranker as fr
    from lab.rerank.encoder import passage
    from lab.rerank.pool import POOL
    from lab.train.make_pairs import load_packages
    from lab.train.pool_cache import load_pool
    from sift.model_files import model_dir
    from sift.retrievers.ranker import active_weights, scores

    t0 = time.perf_counter()
    train = fr._train_questions(load_packages(), None)
    newcomer = fr.newcomer_questions()
    asked: dict[str, tuple[str, str, str]] = {q["id"]: (q["query"], q["kb"], q["source"]) for q in train}
    for split, questions in newcomer.items():
        asked |= {q.id: (q.query, q.kb, f"written:{split}") for q in questions}
    pool = load_pool(POOL)
    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    spec = info()
    sources = Sources(train)
    weights = active_weights()
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = GROUPS.with_suffix(".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as out:
        for split, groups in pool.items():
            for g in groups:
                query, kb, source = asked[g.qid]
                fused = scores(g.x, weights)
                near_gold = [any(p == path and s <= e2 and s2 <= e for path, s2, e2 in g.gold)
                             for p, s, e, _ in g.spans]
                keep = sorted(np.argsort(-fused, kind="stable")[:KEEP].tolist()
                              + [i for i, near in enumerate(near_gold) if near])
                cands = []
                for i in dict.fromkeys(keep):
                    (path, start, end, kind), label, score = g.spans[i], g.y[i], fused[i]
                    lines = sources.lines(kb, path)
                    if lines is None:
                        continue
                    text = passage(tokenizer, spec, query, path, lines[start - 1 : end])
                    cands.append({"path": path, "start": start, "end": end, "kind": kind, "y": int(label),
                                  "fused": round(float(score), 6), "text": text})
                row = {"qid": g.qid, "split": split, "kb": kb, "source": source, "query": query,
                       "gold": [list(s) for s in g.gold], "candidates": cands}
                out.write(json.dumps(row, sort_keys=True) + "\n")
                n += 1
                if n % 1000 == 0:
                    print(f"{n} questions ({time.perf_counter() - t0:.0f}s)", flush=True)
    tmp.replace(GROUPS)
    digest = hashlib.sha256(GROUPS.read_bytes()).hexdigest()
    print(f"wrote {GROUPS.relative_to(ROOT)}: {n} questions, sha256 {digest} ({time.perf_counter() - t0:.0f}s)")


if __name__ == "__main__":
    main()
