"""A package that ships one function three times (a browser bundle, CommonJS and ES module builds): fused search
and the answer show it once, in the file its ``package.json`` names, with the other copies listed. Real ingest,
MiniLM, FAISS, BM25 and SQLite."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from sift.api.app import create_app
from sift.api.auth import create_key
from sift.api.server import serve_in_thread
from sift.api.settings import ApiSettings
from sift.cli import main
from sift.db import open_database
from sift.graph.checkpointer import open_checkpointer
from sift.graph.service import AskService
from sift.models import Filters
from tests.conftest import ingested_repo

RENDER = """/**
 * Fill a greeting card template with the recipient's name and the sender's signature.
 */
function renderGreeting(template, data) {
  const name = data.recipient || 'friend';
  const signature = data.sender ? '-- ' + data.sender : '';
  return template.replace('{{name}}', name).replace('{{signature}}', signature).trim();
}
"""
PARSE = """function parseWeekday(text) {
  const days = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
  return days.indexOf(text.toLowerCase());
}
"""
MANIFEST = json.dumps({"name": "cards", "main": "./lib/cjs/cards.js", "module": "./lib/esm/cards.js",
                       "exports": {"browser": "./cards.min.js", "import": "./lib/esm/cards.js",
                                   "require": "./lib/cjs/cards.js"}}, indent=2)
BUILDS = {
    # the browser bundle at the root holds both modules, as a bundler writes them
    "cards.js": f"(function () {{\n{PARSE}\n{RENDER}\n}})();\n",
    "lib/cjs/cards.js": f"'use strict';\n\n{RENDER}\nmodule.exports = {{ renderGreeting }};\n",
    "lib/esm/cards.js": f"{RENDER}\nexport {{ renderGreeting }};\n",
    "lib/cjs/dates.js": f"{PARSE}\nmodule.exports = {{ parseWeekday }};\n",
    "README.md": "# cards\n\nGreeting cards for every occasion.\n",
}
QUESTION = "where is the greeting card template filled with the recipient's name"


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    with ingested_repo(tmp_path_factory.mktemp("copies"), {**BUILDS, "package.json": MANIFEST}, "cards",
                       local_embedder) as ready:
        yield ready


@pytest.fixture(scope="module")
def bare(tmp_path_factory, local_embedder):
    """The same files without a manifest."""
    with ingested_repo(tmp_path_factory.mktemp("copies-bare"), BUILDS, "bare", local_embedder) as ready:
        yield ready


def test_search_shows_one_copy_where_the_manifest_points(env):
    _, _, searcher = env
    hits = searcher.search(QUESTION, Filters(kb="cards"), k=5).hits
    render = [h for h in hits if h.symbol == "renderGreeting"]
    assert len(render) == 1, [(h.path, h.name) for h in hits]
    assert render[0].path == "lib/cjs/cards.js" and render[0] is hits[0]
    assert sorted(c.path for c in render[0].copies) == ["cards.js", "lib/esm/cards.js"]
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len(hits) == 5 or len(hits) == len({(h.path, h.start_line) for h in hits})


def test_the_entry_points_are_read_once_per_generation_and_only_the_newest_is_kept(env):
    _, engine, searcher = env
    from sift.catalog import get_serving_kb

    ref = get_serving_kb(engine, "cards", "default")
    entries = searcher.entry_paths(ref.id, ref.generation)
    assert entries[0] == "lib/cjs/cards.js"
    assert searcher.entry_paths(ref.id, ref.generation) is entries  # read once
    # A later generation (its manifest unchanged) replaces the one kept; an older one is read again, not kept.
    assert searcher.entry_paths(ref.id, ref.generation + 1) == entries
    assert searcher.entry_paths(ref.id, ref.generation) == entries
    assert searcher._entries == {ref.id: (ref.generation + 1, entries)}


def test_without_a_manifest_the_best_ranked_copy_is_shown(bare):
    _, _, searcher = bare
    unfolded = searcher.search(QUESTION, Filters(kb="bare"), k=20, channels="bm25").hits
    hits = searcher.search(QUESTION, Filters(kb="bare"), k=5).hits
    render = [h for h in hits if h.symbol == "renderGreeting"]
    assert len(render) == 1 and len(render[0].copies) == 2
    assert sum(h.symbol == "renderGreeting" for h in unfolded) == 3  # one channel alone lists every copy
    shown = {render[0].path, *(c.path for c in render[0].copies)}
    assert shown == {"cards.js", "lib/cjs/cards.js", "lib/esm/cards.js"}


def test_search_json_and_text_list_the_copies(env, capsys):
    settings, _, _ = env
    assert main(["search", QUESTION, "--kb", "cards", "-k", "3", "--json", "--data-dir", str(settings.data_dir)]) == 0
    data = json.loads(capsys.readouterr().out)
    first = data["hits"][0]
    assert first["path"] == "lib/cjs/cards.js"
    assert {c["path"] for c in first["copies"]} == {"cards.js", "lib/esm/cards.js"}
    assert all(set(c) == {"path", "start_line", "end_line"} for c in first["copies"])
    assert data["files"]["lib/cjs/cards.js"][0]["copies"] == first["copies"]
    assert main(["search", QUESTION, "--kb", "cards", "-k", "3", "--data-dir", str(settings.data_dir)]) == 0
    text = capsys.readouterr().out
    assert "    also in " in text and "lib/esm/cards.js:" in text


def test_the_answer_cites_the_copy_the_manifest_points_to(env):
    settings, engine, searcher = env

    async def go():
        async with open_checkpointer(settings) as saver:
            return await AskService(settings, engine, searcher, saver).ask(QUESTION, "cards")

    answer = asyncio.run(go())
    cited = [c.path for c in answer.citations]
    assert cited and cited[0] == "lib/cjs/cards.js", (cited, answer.text)
    assert "cards.js" not in cited  # the bundle is a copy, not a second place


def test_rest_search_lists_the_copies(env, local_embedder):
    settings = ApiSettings(data_dir=env[0].data_dir)
    engine = open_database(settings)  # this test's own database (in PostgreSQL mode, a copy of the module's)
    key = create_key(engine, "default")[1]
    engine.dispose()
    app = create_app(settings, embedder=local_embedder)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=60,
                                                   headers={"Authorization": f"Bearer {key}"}) as client:
        r = client.post("/v1/search", json={"kb": "cards", "query": QUESTION, "k": 3})
    assert r.status_code == 200, r.text
    first = r.json()["hits"][0]
    assert first["path"] == "lib/cjs/cards.js"
    assert {c["path"] for c in first["copies"]} == {"cards.js", "lib/esm/cards.js"}
    assert r.json()["files"]["lib/cjs/cards.js"][0]["copies"] == first["copies"]
