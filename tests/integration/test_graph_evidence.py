"""The evidence a graph run hands its writer holds the whole chunk it cites, however long its lines."""

from __future__ import annotations

import asyncio

import pytest

from sift.graph.service import AskService, open_checkpointer
from sift.graph.state import Answer
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
