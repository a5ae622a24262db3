"""TypeScript type-only declarations (interfaces, type aliases, ``declare``, ``.d.ts``) are chunks of kind ``type``,
and a question about behaviour ranks the implementing method above them: a real ingest of the ``ts_retry`` fixture
(a client class whose private method computes the pause between retries, the options interface that declares its
settings, and a ``.d.ts`` declaring the class), with real MiniLM, FAISS, BM25 and SQLite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sift.config import Settings
from sift.db import open_database
from sift.ingest.pipeline import ingest
from sift.models import Filters
from sift.retrievers.backend import make_index_cache
from sift.retrievers.search import Searcher

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ts_retry"
IMPLEMENTATION = ("src/client.ts", "Relay.#pauseBefore")
DECLARATIONS = {("src/types/retry.ts", "RetryOptions"), ("types/index.d.ts", "Relay"),
                ("types/index.d.ts", "RelayOptions"), ("types/index.d.ts", "Relay.get")}


@pytest.fixture(scope="module")
def searcher(tmp_path_factory, local_embedder):
    base = tmp_path_factory.mktemp("ts")
    repo = base / "ts_retry"
    shutil.copytree(FIXTURE, repo)
    settings = Settings(data_dir=base / "data")
    ingest(settings, repo, "ts", embedder=local_embedder)
    engine = open_database(settings)
    s = Searcher(engine, make_index_cache(settings, engine), local_embedder)
    yield s
    s.close()


def test_ts_declarations_are_type_chunks(searcher):
    hits = searcher.search("retry options pause relay", Filters(kb="ts"), k=50, channels="bm25").hits
    kinds = {(h.path, h.name): h.kind for h in hits}
    assert set(kinds) >= DECLARATIONS, kinds
    assert {kinds[d] for d in DECLARATIONS} == {"type"}, kinds
    assert kinds[IMPLEMENTATION] == "function"
    assert kinds[("src/client.ts", "Relay.#send")] == "function"


def _order(searcher, question: str) -> list[tuple[str, str]]:
    return [(h.path, h.name) for h in searcher.search(question, Filters(kb="ts"), k=10).hits]


def _above(order: list[tuple[str, str]], declarations: set[tuple[str, str]]) -> bool:
    """Whether the implementation is listed, above every one of ``declarations`` that is listed."""
    first = min((order.index(d) for d in declarations if d in order), default=len(order))
    return IMPLEMENTATION in order and order.index(IMPLEMENTATION) < first


@pytest.mark.parametrize("question", [
    "where is the pause before a request is sent again worked out?",
    "where is the delay between two retry attempts computed?",
    "how is the wait between two retry attempts computed?",
])
def test_ts_behaviour_question_ranks_the_implementation_above_its_d_ts_declarations(searcher, question):
    order = _order(searcher, question)
    assert _above(order, {d for d in DECLARATIONS if d[0].endswith(".d.ts")}), order


def test_ts_where_question_ranks_the_implementation_above_the_options_interface(searcher):
    order = _order(searcher, "where is the pause before a request is sent again worked out?")
    assert _above(order, DECLARATIONS), order


def test_ts_options_question_still_finds_the_declaration(searcher):
    assert ("src/types/retry.ts", "RetryOptions") in _order(searcher, "which settings does RetryOptions accept?")[:3]
