"""The NumPy cross-encoder (lab/rerank/encoder.py) against its reference: the same weights in the torch model the fit
trains (``lab/rerank/model.PairScorer``: transformers' BertModel, the mean of the pair's states, a linear head).

The weights here are the packaged MiniLM's first four layers with a seeded head: what the fit starts from, with a
head that is not zero. The comparison is of the arithmetic, which is the same for any weights of this shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lab.rerank.encoder import CrossEncoder, RerankerInfo, pack
from sift.model_files import model_dir

QUESTION = "How do I make an option that the user must always provide?"
PASSAGES = [
    "src/click/core.py\nclass Option(Parameter):\n    def __init__(self, required: bool = False):",
    "docs/options.rst\nRequired Options\n----------------\nPass required=True to make an option mandatory.",
    "README.md\n# Progress bars\nUse click.progressbar to show progress.",
    "x" * 3000,  # past the window: cut to the model's length
    "",  # an empty passage still has its separators
    "中文文本检索：令牌在哪里验证？ 😀 emoji",
    "def f():\n" + "    return 1\n" * 200,
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path, Path]:
    import torch
    from transformers.utils import logging

    from lab.rerank.model import PairScorer

    logging.set_verbosity_error()
    torch.manual_seed(0)
    base = model_dir()
    net = PairScorer.from_base(base, 4).eval()
    with torch.no_grad():  # a head that separates the passages, as a fitted one would
        net.classifier.weight.normal_(0, 1)
    tensors = {k: v.numpy() for k, v in net.state_dict().items() if not k.endswith("position_ids")}
    info = RerankerInfo(4, 128, 32, "all-MiniLM-L6-v2, first four layers, seeded head", {})
    config = json.loads((base / "config.json").read_text())
    tokenizer = (base / "tokenizer.json").read_text(encoding="utf-8")
    d = tmp_path_factory.mktemp("reranker")
    np.savez(d / "float32.npz", **pack(tensors, info, config, tokenizer, exact=True))  # type: ignore[arg-type]
    np.savez_compressed(d / "int8.npz", **pack(tensors, info, config, tokenizer))  # type: ignore[arg-type]
    return net, d / "float32.npz", d / "int8.npz"


def _torch_scores(net: object, ce: CrossEncoder, question: str, passages: list[str]) -> np.ndarray:
    import torch

    ids, types = ce.encode(question, passages)
    n = max(len(r) for r in ids)
    tensors = {name: torch.zeros(len(ids), n, dtype=torch.long) for name in ("input_ids", "token_type_ids",
                                                                             "attention_mask")}
    for k, (row, tt) in enumerate(zip(ids, types, strict=True)):
        tensors["input_ids"][k, : len(row)] = torch.tensor(row)
        tensors["token_type_ids"][k, : len(tt)] = torch.tensor(tt)
        tensors["attention_mask"][k, : len(row)] = 1
    with torch.no_grad():
        return net(**tensors).numpy()  # type: ignore[operator, no-any-return]


def test_scores_match_the_torch_reference(reference: tuple[object, Path, Path]) -> None:
    net, exact, _ = reference
    ce = CrossEncoder(exact)
    ids, types = ce.encode(QUESTION, PASSAGES)
    assert max(len(r) for r in ids) == 128 and all(len(r) == len(t) for r, t in zip(ids, types, strict=True))
    ours = ce.score(QUESTION, PASSAGES)
    theirs = _torch_scores(net, ce, QUESTION, PASSAGES)
    assert np.abs(ours - theirs).max() <= 1e-4, (ours, theirs)
    assert np.ptp(theirs) > 0.1  # the comparison is of scores that differ
    # one pair at a time, and on two threads, the same scores
    alone = np.array([ce.score(QUESTION, [p])[0] for p in PASSAGES])
    np.testing.assert_allclose(alone, ours, atol=1e-4)
    np.testing.assert_allclose(ce.score(QUESTION, PASSAGES, threads=2), ours, atol=1e-4)
    assert ce.score(QUESTION, []).shape == (0,)


def test_int8_file_keeps_the_order(reference: tuple[object, Path, Path]) -> None:
    net, exact, small = reference
    assert small.stat().st_size < exact.stat().st_size / 3
    quantised = CrossEncoder(small)
    ours = quantised.score(QUESTION, PASSAGES)
    theirs = _torch_scores(net, quantised, QUESTION, PASSAGES)
    assert np.array_equal(np.argsort(-ours), np.argsort(-theirs)), (ours, theirs)


def test_passage_shows_the_lines_that_answer(reference: tuple[object, Path, Path]) -> None:
    ce = CrossEncoder(reference[1])
    lines = ["def main(argv):"] + [f"    step_{i}()" for i in range(200)] + ["    check_required_option(argv)"]
    text = ce.passage("where is a required option checked?", "src/cli.py", lines)
    shown = text.split("\n")
    assert shown[:2] == ["src/cli.py", "def main(argv):"]
    assert shown[-1] == "    check_required_option(argv)"
    assert len(ce.encode("where is a required option checked?", [text])[0][0]) <= 128
