"""lab/train/lora_query.py: its torch MiniLM is the shipped NumPy encoder, and its LoRA training is seeded and
moves a question towards its positive (the real packaged model; torch from the test extra)."""

from __future__ import annotations

import numpy as np
import pytest
import torch  # the test extra installs it (the CPU build)

from lab.train import lora_query as lq

fqa = lq.fqa  # lab/fit/query_adapter.py, which the bench imports

DOCS = ["Parse a duration string such as 3h or 20m into seconds.",
        "Open the configuration file and read its sections.",
        "Retry a failing call with exponential backoff until it succeeds.",
        "Render the table as HTML with escaped cells."]
QUESTIONS = ["how long is '3h' in seconds", "how do I load settings from an ini file",
             "try again after an error, waiting longer each time", "turn rows into a web page"]


@pytest.fixture(scope="module")
def model(local_embedder):
    return lq.TorchMiniLM(local_embedder.model_path)


def test_torch_forward_matches_the_numpy_encoder(model, local_embedder) -> None:
    texts = ["a", "where is the token validated?", " ".join(["word"] * 300)]  # one, a few and past the limit
    ids = local_embedder.encoder.tokenize(texts)
    with torch.no_grad():
        mine = model(ids).numpy()
    np.testing.assert_allclose(mine, local_embedder.encoder(texts), atol=2e-5)
    with torch.no_grad():  # a fresh LoRA starts at B = 0: the bare model
        np.testing.assert_allclose(model(ids, model.new_lora(lq.Config())).numpy(), mine, atol=1e-6)


def _data(model, local_embedder) -> lq.Data:
    docs = local_embedder.encoder(DOCS)
    corpus = fqa.Corpus(docs, [("m.py", i * 10 + 1, i * 10 + 9, "function") for i in range(len(DOCS))])
    vectors = local_embedder.encoder(QUESTIONS)
    questions = [fqa.Question(f"q{i}", "kb", "docstring", vectors[i], np.arange(len(DOCS)) == (i + 1) % 4)
                 for i in range(len(QUESTIONS))]  # each question's positive is another's document: a shift to learn
    ids = dict(zip([q.qid for q in questions], local_embedder.encoder.tokenize(QUESTIONS), strict=True))
    return lq.Data(model, {"kb": corpus}, questions, [], ids)


def test_training_is_seeded_and_moves_questions_to_their_positives(model, local_embedder) -> None:
    data = _data(model, local_embedder)
    config = lq.Config(rank=4, targets=("query", "value", "up"), epochs=24.0, lr=1.0)  # 3 steps of 32, still warming up
    first, second = lq.train_lora(data, data.mined, config), lq.train_lora(data, data.mined, config)
    assert all(torch.equal(a, b) for key in first for a, b in zip(first[key], second[key], strict=True))
    bare = np.stack([q.vector for q in data.mined])
    before = np.mean(fqa.ranks_of(data.mined, data.corpora, bare))
    after = np.mean(fqa.ranks_of(data.mined, data.corpora, lq.embed(data, data.mined, first)))
    assert after > before
