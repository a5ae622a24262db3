"""The evidence a graph run hands its writer holds the whole chunk it cites, however long its lines."""

from __future__ import annotations

import asyncio

import pytest

from sift.graph.checkpointer import open_checkpointer
from sift.graph.models import Answer
from sift.graph.service import AskService
from tests.conftest import ingested_repo

# One function of 100 lines and about 7,000 characters: a single chunk (a function is cut only past 120 lines),
# with the line that answers the question near its end.
STEPS = "".join(f"    record = stage_{i:02d}(record, options.get('stage_{i:02d}_settings', DEFAULTS))\n"
                for i in range(90))
PIPELINE = (
    "def run_upload(record, options, DEFAULTS=None):\n"
    '    """Run an upload through every stage of the pipeline."""\n'
    f"{STEPS}"
    "    if options.get('uploads_today', 0) >= NIGHTLY_QUOTA:\n"
    "        raise QuotaExceeded('the nightly quota of uploads is used up; retry after midnight')\n"
    "    return record\n"
)
# A section whose one example is long enough to be cut into several chunks: the middle ones hold no fence line.
EXAMPLE = "".join(f"archive.move('batch-{i:02d}', {{ target: 'cold-storage-{i:02d}', retries: {i % 4} }});\n"
                  for i in range(60))
README = ("# uploads\n\nMoves files to the archive.\n\n## Moving batches\n\nEvery batch is moved on its own:\n\n"
          f"```js\n{EXAMPLE}```\n\nA batch that fails is retried.\n")
FILES = {"src/uploads/pipeline.py": PIPELINE, "README.md": README}


@pytest.fixture(scope="module")
def env(tmp_path_factory, local_embedder):
    with ingested_repo(tmp_path_factory.mktemp("evidence"), FILES, "uploads", local_embedder) as ready:
        yield ready


def _ask(env, question: str) -> Answer:
    settings, engine, searcher = env

    async def go() -> Answer:
        async with open_checkpointer(settings) as saver:
            return await AskService(settings, engine, searcher, saver).ask(question, "uploads")

    return asyncio.run(go())


def test_a_long_chunk_reaches_the_writer_whole(env) -> None:
    assert len(PIPELINE) > 6000 and PIPELINE.count("\n") < 120
    answer = _ask(env, "What happens when the nightly quota of uploads is used up?")
    assert any(e.path == "src/uploads/pipeline.py" and e.end_line == PIPELINE.count("\n") for e in answer.evidence)
    assert "QuotaExceeded" in answer.text and "NIGHTLY_QUOTA" in answer.text  # the line and its condition


def test_a_chunk_inside_a_long_example_is_shown_as_code(env) -> None:
    answer = _ask(env, "How is batch 31 moved to cold storage 31?")
    middle = [e for e in answer.evidence if e.path == "README.md" and e.start_line > 12 and e.end_line < 70]
    assert middle, answer.evidence  # a chunk from the middle of the example was retrieved
    assert "cold-storage-31" in answer.text
    for line in answer.text.splitlines():  # the example's lines are code, never run together as prose
        assert "archive.move(" not in line or line.startswith("archive.move("), line


# Release notes repeat their sub-headings under every release: "Fixed" alone does not say which release.
CHANGES = ("# Changes\n\n## 3.1.0\n\n### Fixed\n\n- Uploads no longer stall when the archive is offline.\n\n"
           "### Added\n\n- A retry limit for uploads.\n\n## 3.0.0\n\n### Fixed\n\n- Batches keep their order.\n\n"
           "## Upgrading\n\nRun the migration before the first upload.\n")


# A section that only introduces its parts, each long enough that the whole is past WHOLE_SECTION_LINES.
PARTS = "".join(f"### {name}\n\n" + "".join(f"Line {i} about the {name.lower()}.\n\n" for i in range(8))
                for name in ("TimeoutError", "QuotaError", "OfflineError"))
ERRORS = f"# Uploads\n\n## Errors\n\nEvery failed upload raises one of these errors.\n\n{PARTS}"


@pytest.fixture(scope="module")
def notes(tmp_path_factory, local_embedder):
    files = {"CHANGES.md": CHANGES, "docs/errors.md": ERRORS}
    with ingested_repo(tmp_path_factory.mktemp("notes"), files, "notes", local_embedder) as ready:
        yield ready


def test_a_repeated_heading_is_named_with_the_section_it_sits_under(notes) -> None:
    from sift.graph.retrieval import build_evidence
    from sift.graph.writer.doc_quotes import label
    from sift.models import Filters

    _, engine, searcher = notes
    hits = searcher.search("stall offline archive order migration retry", Filters(kb="notes"), k=10).hits
    evidence = {e.start_line: e for e in build_evidence(engine, "notes", "default", hits, 10)}
    labels = {label(e) for e in evidence.values()}
    assert 'the section "3.1.0 › Fixed"' in labels and 'the section "3.0.0 › Fixed"' in labels
    assert 'the section "Added"' in labels  # said once in the file: its own heading names it
    assert 'the section "Upgrading"' in labels  # under the title, said once


def test_a_section_knows_the_parts_its_lines_do_not_reach(notes) -> None:
    from sift.graph.retrieval import WHOLE_SECTION_LINES, build_evidence
    from sift.models import Filters

    assert ERRORS.count("\n") > WHOLE_SECTION_LINES  # the section is not read whole
    _, engine, searcher = notes
    hits = searcher.search("Every failed upload raises one of these errors", Filters(kb="notes"), k=10).hits
    evidence = build_evidence(engine, "notes", "default", hits, 10)
    intro = next(e for e in evidence if e.path == "docs/errors.md" and e.symbol.endswith("Errors"))
    assert intro.subsections == ["TimeoutError", "QuotaError", "OfflineError"]
    assert all(not e.subsections for e in evidence if e.symbol.endswith("Error"))  # a leaf section has none
