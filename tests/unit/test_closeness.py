"""Choosing what a candidate says by meaning as well as by the question's terms (``graph/writer/closeness.py``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sift.graph.models import Evidence
from sift.graph.writer.closeness import MAX_CHARS, MAX_TEXTS, closeness, sentence_score
from sift.graph.writer.doc_quotes import doc_sentences
from sift.graph.writer.uncertain import gist

SECTION = Evidence(
    id=1, path="docs/cache.md", start_line=1, end_line=6, kind="doc", name="Cache", symbol="Guide > Cache",
    score=1.0, text="The cache keeps recent results in memory for later lookups.\n\n"
                    "Setting the size to zero switches caching off entirely.\n")


def fixed(scores: dict[str, float]):
    """A ``Closeness`` with given cosines (0 for any other text)."""
    def near(texts: Sequence[str]) -> list[float]:
        return [scores.get(t, 0.0) for t in texts]
    return near


@pytest.mark.parametrize(("terms", "cosine", "weight", "expected"), [
    (0, 0.0, 4.0, 0.0),
    (2, 0.0, 4.0, 2.0),
    (0, 0.5, 4.0, 2.0),  # half a cosine is worth two shared terms
    (1, 0.25, 4.0, 2.0),
    (1, 0.9, 0.0, 1.0),  # without weight, terms alone
])
def test_sentence_score(terms: int, cosine: float, weight: float, expected: float) -> None:
    assert sentence_score(terms, cosine, weight) == pytest.approx(expected)


def test_doc_sentences_by_terms_alone_without_closeness() -> None:
    assert doc_sentences(SECTION, ["cache"], limit=1) == ["The cache keeps recent results in memory for later lookups."]


def test_doc_sentences_prefer_the_sentence_closest_in_meaning() -> None:
    off = "Setting the size to zero switches caching off entirely."
    near = fixed({off: 0.7, "The cache keeps recent results in memory for later lookups.": 0.2})
    assert doc_sentences(SECTION, ["cache"], limit=1, near=near) == [off]


def test_a_candidate_line_says_the_sentence_closest_in_meaning() -> None:
    off = "Setting the size to zero switches caching off entirely."
    assert gist(SECTION, ["cache"]) != off
    assert gist(SECTION, ["cache"], fixed({off: 0.7})) == off


def test_closeness_without_an_embedder_is_none() -> None:
    assert closeness(None, "How do I turn the cache off?") is None


class Counting:
    """An embedder stand-in that counts the texts it embeds (vectors: one-hot by first letter)."""

    def __init__(self) -> None:
        self.embedded = 0

    def embed_documents(self, texts: list[str]):
        import numpy as np

        self.embedded += len(texts)
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, (ord(t[0].lower()) - 97) % 26] = 1.0
        return out


def test_closeness_embeds_each_text_once_and_at_most_max_texts() -> None:
    counting = Counting()
    near = closeness(counting, "apples")  # type: ignore[arg-type]
    assert near is not None and counting.embedded == 1
    assert near(["a pear", "b", "a pear"]) == [1.0, 0.0, 1.0]
    assert counting.embedded == 3  # the question, then two distinct texts
    near(["a pear", "b"])
    assert counting.embedded == 3
    many = [f"x{i}" for i in range(2 * MAX_TEXTS)]
    scores = near(many)
    assert counting.embedded == 1 + MAX_TEXTS and len(scores) == len(many)  # the rest score 0: terms alone


def test_the_local_model_puts_the_answering_sentence_first(local_embedder) -> None:
    near = closeness(local_embedder, "How long does a request wait before giving up?")
    assert near is not None
    pool, timeout = near(["Requests are sent with a connection pool.",
                          "The timeout defaults to 30 seconds, after which the request fails."])
    assert timeout > pool + 0.1


def test_closeness_compares_the_first_max_chars_of_a_text() -> None:
    seen: list[str] = []

    class Recording(Counting):
        def embed_documents(self, texts: list[str]):
            seen.extend(texts)
            return super().embed_documents(texts)

    near = closeness(Recording(), "apples", max_chars=5)  # type: ignore[arg-type]
    assert near is not None and near(["a pear tree", "b"]) == [1.0, 0.0]
    assert seen == ["apples", "a pea", "b"]
    default = closeness(Recording(), "apples")  # type: ignore[arg-type]
    assert default is not None and default(["a" * (MAX_CHARS + 50)]) == [1.0]
    assert len(seen[-1]) == MAX_CHARS
