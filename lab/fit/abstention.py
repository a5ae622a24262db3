"""Choose ``graph.writer.abstention.ABSENT_TERMS`` (how many rare question words the evidence must lack to be no answer),
``graph.writer.selection.AGREED_COVERAGE`` (the coverage that suffices when every search channel agrees on the first item),
``graph.writer.abstention.MEANING_FLOOR`` (the cosine to the question at which the first evidence item overrides a
not-found on the question's words alone) and ``graph.writer.terms.GENERIC_CUT`` (which question words the corpus lacks
are generic phrasing, left out of the question's terms, rather than topics).

    python lab/fit/abstention.py           # ask the fitting sets, replay the decision, print the table and choice
    python lab/fit/abstention.py --check   # also fail unless the committed constants are the choice

For each candidate ``AGREED_COVERAGE`` (``MIN_COVERAGE`` switches it off) and ``GENERIC_CUT`` (None: no word is
generic) it asks every question of the dev, dev2 and spent test sets (never the test sets) through the graph, as
``bench/answer.py`` does, and records the measures (``abstention.signals``) of each question's last draft and its
first evidence item's cosine to the question under the local model. Then, for each candidate count and meaning floor, it replays ``abstention.decide`` and
``abstention.near_in_meaning`` on those measures and counts the negatives answered "not found" and the answerable
questions turned away. The choice maximises the balanced accuracy of the two (the share of negatives caught plus
the share of answerable questions answered, halved); a tie keeps the more cautious choice: the higher coverage
floor, then the fewer generic words, then the smaller count, then the higher meaning floor. The replay holds the
graph's path fixed: a draft that abstains may send the graph to another retrieval round, which the replay does not
follow, so ``bench/answer.py`` is the figure to quote afterwards. Sixteen recordings: about 30 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import answer as bench  # noqa: E402  (bench/answer.py)

import sift.graph.writer.extractive as extractive  # noqa: E402
from sift.graph.writer import abstention, terms  # noqa: E402
from sift.graph.writer import selection as support  # noqa: E402

CANDIDATES = (2, 3, 4, 5, 6)
MEANING_FLOORS = (None, 0.7, 0.65, 0.6, 0.55, 0.5)  # candidate MEANING_FLOOR values; None never overrides
FLOORS = (support.MIN_COVERAGE, 0.26, 0.22, 0.18)  # candidate AGREED_COVERAGE values, the first switches it off
CUTS = (None, *terms.GENERIC_CUTS)  # candidate GENERIC_CUT values, from no generic word to the most


@cache
def _embedder() -> Any:
    """The local model, loaded once for every recording."""
    from sift.embed import make_embedder

    return make_embedder(bench.Settings(data_dir=bench.DATA))


def record(floor: float, cut: tuple[float, float] | None) -> dict[str, Any]:
    """Ask the fitting sets with ``AGREED_COVERAGE`` at ``floor``, ``GENERIC_CUT`` at ``cut`` and the writer's
    abstention measured: the last draft's signals per question."""
    from sift.graph.writer.closeness import closeness

    embedder = _embedder()
    seen: dict[str, Any] = {}
    real, committed, committed_cut = extractive.not_found_reason, support.AGREED_COVERAGE, terms.GENERIC_CUT
    support.AGREED_COVERAGE, terms.GENERIC_CUT = floor, cut

    def measured(plan: Any, evidence: Any, chosen: Any, idf: Any) -> str | None:
        near = closeness(embedder, plan.standalone, abstention.PASSAGE_CHARS)
        similarity = near([abstention.first_passage(evidence)])[0] if near and evidence else None
        seen[plan.standalone] = (abstention.signals(plan, evidence, chosen, idf), similarity)
        return real(plan, evidence, chosen, idf)

    extractive.not_found_reason = measured  # type: ignore[assignment]
    try:
        rows = asyncio.run(bench.collect(bench.FIT_SETS))
    finally:
        extractive.not_found_reason = real  # type: ignore[assignment]
        support.AGREED_COVERAGE, terms.GENERIC_CUT = committed, committed_cut
    questions = {q.id: q.query for path in bench.FIT_SETS for q in bench.load_questions(path, strict=True)[0]}
    return {"rows": rows, "signals": {r["id"]: seen.get(questions[r["id"]]) for r in rows}}


def table(rows: list[dict[str, Any]], found: dict[str, Any], floor: float,
          cut: tuple[float, float] | None) -> list[dict[str, Any]]:
    """For each candidate count and meaning floor: negatives caught, answerable turned away, and their balanced
    accuracy."""
    negatives = [r for r in rows if r["negative"]]
    answerable = [r for r in rows if not r["negative"]]

    def abstains(row: dict[str, Any], k: int, meaning: float | None) -> bool:
        signals, similarity = found[row["id"]] or (None, None)
        if abstention.decide(signals, k) is None:
            return False
        return not abstention.near_in_meaning(signals, similarity, k, meaning)

    out = []
    for k in CANDIDATES:
        for meaning in MEANING_FLOORS:
            caught = sum(abstains(r, k, meaning) for r in negatives)
            turned = sum(abstains(r, k, meaning) for r in answerable)
            balanced = (caught / max(len(negatives), 1) + 1 - turned / max(len(answerable), 1)) / 2
            out.append({"agreed_coverage": floor, "generic_cut": cut, "absent_terms": k, "meaning_floor": meaning,
                        "negatives_caught": caught, "negatives": len(negatives), "answerable_turned_away": turned,
                        "answerable": len(answerable), "balanced": round(balanced, 4)})
    return out


def main() -> int:
    """Record, replay, print; with ``--check``, fail unless the committed constant is the choice."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="fail unless the committed constants are the choice")
    args = p.parse_args()
    rows = []
    for floor in FLOORS:
        for cut in CUTS:
            got = record(floor, cut)
            rows += table(got["rows"], got["signals"], floor, cut)
    for row in rows:
        meaning = "off " if row["meaning_floor"] is None else f"{row['meaning_floor']:.2f}"
        print(f"agreed_coverage {row['agreed_coverage']:.2f} generic_cut {row['generic_cut']} "
              f"absent_terms {row['absent_terms']} "
              f"meaning_floor {meaning}: negatives caught {row['negatives_caught']}/{row['negatives']}, "
              f"answerable turned away {row['answerable_turned_away']}/{row['answerable']}, "
              f"balanced accuracy {row['balanced']:.4f}")

    def cautious(row: dict[str, Any]) -> tuple[float, float, int, float, float]:
        meaning = 2.0 if row["meaning_floor"] is None else row["meaning_floor"]
        return (row["balanced"], row["agreed_coverage"], -CUTS.index(row["generic_cut"]), -row["absent_terms"],
                meaning)

    best = max(rows, key=cautious)
    chosen = (best["agreed_coverage"], best["generic_cut"], best["absent_terms"], best["meaning_floor"])
    committed = (support.AGREED_COVERAGE, terms.GENERIC_CUT, abstention.ABSENT_TERMS, abstention.MEANING_FLOOR)
    print(f"chosen: AGREED_COVERAGE = {chosen[0]}, GENERIC_CUT = {chosen[1]}, ABSENT_TERMS = {chosen[2]}, "
          f"MEANING_FLOOR = {chosen[3]} (committed: {', '.join(map(str, committed))})")
    same = chosen == committed
    return 1 if args.check and not same else 0


if __name__ == "__main__":
    sys.exit(main())
