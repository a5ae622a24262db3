"""BM25's k1 and b, measured: the keyword channel's span MRR over a grid, on the ranker's fitting questions.

The keyword channel indexes with rank_bm25's defaults (k1 1.5, b 0.75; ``sift.index.bm25.BM25Builder``). This
script asks whether other values rank better on sift's chunks: for each knowledge base that
``lab/fit/ranker.py`` ingested into ``bench/out/ranker/data`` (run it first), it scores every visible chunk as
the channel does (``ingest.chunk.embedding_text`` tokenised, Okapi idf and term scores of ``sift.index.bm25``) for
each (k1, b) of the grid, and prints the span MRR of the top 100 (the channel's depth) over the mined train
questions and, separately, over the written questions of the dev, dev2 and spent test sets (never the test sets).

    python lab/train/bm25_params.py

Measured once (chunking 6; 5,705 mined and 480 written questions): the defaults scored 0.721 (mined) and 0.523
(written). The best cell on both, k1 0.9 and b 0.5, scored 0.734 and 0.536, +0.012 and +0.013; the best on the
written questions, k1 2.0 and b 0.3, 0.538 but 0.705 on the mined ones. That is one channel of three before fusion,
and changing it means indexing every knowledge base again and refitting the ranker after it, so the defaults stay.
"""

from __future__ import annotations

import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy import sparse

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import ranker as fit_ranker  # noqa: E402  (lab/fit/ranker.py: the questions it fits on)
from lab.train.make_pairs import load_packages  # noqa: E402
from sift.index.bm25 import idf_okapi, term_scores  # noqa: E402
from sift.ingest.chunk import embedding_text  # noqa: E402
from sift.tokenize import tokenize  # noqa: E402

DB = ROOT / "bench" / "out" / "ranker" / "data" / "sift.db"
GRID = [(k1, b) for k1 in (0.9, 1.2, 1.5, 2.0) for b in (0.3, 0.5, 0.75, 0.9)]
DEPTH = 100
Question = tuple[str, str, str, list[tuple[str, int, int]]]  # (kind of question, kb, query, gold spans)


def questions() -> list[Question]:
    """The mined train questions and the written fitting questions, with their gold spans."""
    out: list[Question] = [("mined", q["kb"], q["query"], [(s["path"], s["start_line"], s["end_line"])
                                                          for s in q["gold_spans"]])
                           for q in fit_ranker._train_questions(load_packages(), None)]
    out += [("written", q.kb, q.query, [(s.path, s.start_line, s.end_line) for s in q.gold_spans])
            for qs in fit_ranker.newcomer_questions().values() for q in qs]
    return out


def reciprocal_ranks(db: sqlite3.Connection, kb_id: int, asked: list[Question]) -> dict[tuple[float, float], list[float]]:
    """Each grid cell's reciprocal rank of the first chunk overlapping a gold span, per question (0 beyond
    ``DEPTH``)."""
    rows = db.execute("SELECT c.kind, c.path, c.name, c.heading_path, c.text, c.start_line, c.end_line FROM chunks c "
                      "JOIN files f ON f.id = c.file_id WHERE c.kb_id = ? AND f.gen_to IS NULL", (kb_id,)).fetchall()
    vocab: dict[str, int] = {}
    terms, docs, tfs, lengths = [], [], [], []
    for i, (kind, path, name, heading, text, _, _) in enumerate(rows):
        counts = Counter(tokenize(embedding_text(kind, path, name, heading, text)))
        lengths.append(sum(counts.values()))
        for term, count in counts.items():
            terms.append(vocab.setdefault(term, len(vocab)))
            docs.append(i)
            tfs.append(count)
    t, d = np.array(terms), np.array(docs)
    tf, dl = np.array(tfs, dtype=np.float64), np.array(lengths, dtype=np.float64)
    idf = idf_okapi(len(rows), np.bincount(t, minlength=len(vocab)).tolist(), 0.25)
    paths = np.array([r[1] for r in rows], dtype=object)
    starts, ends = np.array([r[5] for r in rows]), np.array([r[6] for r in rows])
    gold = [np.logical_or.reduce([(paths == p) & (starts <= e) & (ends >= s) for p, s, e in q[3]]) for q in asked]
    query_terms = [[vocab[w] for w in tokenize(q[2]) if w in vocab] for q in asked]
    out: dict[tuple[float, float], list[float]] = {}
    for k1, b in GRID:
        matrix = sparse.csr_matrix((term_scores(tf, dl[d], float(dl.mean()), idf[t], k1, b), (t, d)),
                                   shape=(len(vocab), len(rows)))
        ranks = []
        for words, relevant in zip(query_terms, gold, strict=True):
            scores = np.asarray(matrix[words].sum(axis=0)).ravel() if words else np.zeros(len(rows))
            top = np.argsort(-scores, kind="stable")[:DEPTH]
            top = top[scores[top] > 0]
            hit = np.flatnonzero(relevant[top])
            ranks.append(1.0 / (hit[0] + 1) if len(hit) else 0.0)
        out[(k1, b)] = ranks
    return out


def main() -> None:
    if not DB.exists():
        raise SystemExit(f"{DB} is missing: run python lab/fit/ranker.py first")
    db = sqlite3.connect(DB)
    kb_ids = dict(db.execute("SELECT name, id FROM knowledge_bases"))
    by_kb: dict[str, list[Question]] = defaultdict(list)
    for q in questions():
        by_kb[q[1]].append(q)
    missing = sorted(set(by_kb) - set(kb_ids))
    if missing:
        raise SystemExit(f"not ingested in {DB}: {', '.join(missing)}; run python lab/fit/ranker.py first")
    scores: dict[tuple[float, float], dict[str, list[float]]] = {cell: defaultdict(list) for cell in GRID}
    for kb, asked in sorted(by_kb.items()):
        for cell, ranks in reciprocal_ranks(db, kb_ids[kb], asked).items():
            for q, rank in zip(asked, ranks, strict=True):
                scores[cell][q[0]].append(rank)
    print(f"{'k1':>4} {'b':>5} {'mined':>7} {'written':>8}   (span MRR@{DEPTH} of the keyword channel alone)")
    for (k1, b), by_kind in scores.items():
        mark = "  <- the index's" if (k1, b) == (1.5, 0.75) else ""
        print(f"{k1:>4} {b:>5} {np.mean(by_kind['mined']):>7.4f} {np.mean(by_kind['written']):>8.4f}{mark}")
    print(f"{len(scores[GRID[0]]['mined'])} mined and {len(scores[GRID[0]]['written'])} written questions")


if __name__ == "__main__":
    main()
