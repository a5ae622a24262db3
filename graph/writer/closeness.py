"""How close a passage is in meaning to the question: the local model's cosine, for choosing what to quote.

An uncertain answer's candidate places each say, in one line, what they hold; for a documentation section that
is its sentence best for the question. By terms alone, the sentence that repeats the question's words wins over
the one that answers it in other words ("how long does a request wait" against "the timeout defaults to 30
seconds"); a ``Closeness`` adds how near each sentence is in meaning. MiniLM was trained on question–answer and
sentence pairs, so it ranks the sentence that answers first more often. A sentence's score is its term count plus
``MEANING_WEIGHT`` times its cosine (``sentence_score``).

Only the local model is used: it is in the process already, and two candidates' sentences cost tens of
milliseconds (MiniLM takes ~7 ms per sentence on two cores). With a remote embedder, or none, sentences score by
terms alone (``AskContext.closeness`` gives None). Measured and not kept: choosing the answer's own quoted
sentences and docstring lines this way too (dev and spent sets: +1 right answer in 240, one lost, p95 ask
+100–300 ms), and a candidate definition's docstring sentence instead of its summary (no change).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sift.embed import Embedder

Closeness = Callable[[Sequence[str]], list[float]]

# The weight of a sentence's cosine to the question against one shared term, chosen with `python bench/answer.py`
# on the dev and spent sets (never test4) over 1, 4, 10 and 100: answer hit 0.610 / 0.407 / 0.397 / 0.269 (dev,
# test, test2, test3) at 1; 0.610 / 0.424 / 0.397 / 0.269 at 4 and at 10; test2 0.379 at 100. The smaller of the tie.
MEANING_WEIGHT = 4.0
MAX_TEXTS = 64  # sentences embedded for one answer at most; the rest score by their terms alone
MAX_CHARS = 300  # of one sentence or code example: its opening says what it is about


def sentence_score(terms: int, cosine: float, weight: float = MEANING_WEIGHT) -> float:
    """A sentence's score: the question terms it shares plus ``weight`` times its cosine to the question."""
    return terms + weight * cosine


def closeness(embedder: Embedder | None, question: str, max_chars: int = MAX_CHARS) -> Closeness | None:
    """The cosine of texts (their first ``max_chars``) to ``question`` under ``embedder`` (its document side, no
    query adapter: both are passages of prose), cached for one answer; None without an embedder."""
    if embedder is None or not question.strip():
        return None
    import numpy as np

    asked = np.asarray(embedder.embed_documents([question])[0], dtype=np.float32)
    seen: dict[str, float] = {}

    def near(texts: Sequence[str]) -> list[float]:
        new = [t for t in dict.fromkeys(texts) if t not in seen][:max(0, MAX_TEXTS - len(seen))]
        if new:
            vectors = np.asarray(embedder.embed_documents([t[:max_chars] for t in new]), dtype=np.float32)
            seen.update(zip(new, (vectors @ asked).tolist(), strict=True))
        return [seen.get(t, 0.0) for t in texts]

    return near
