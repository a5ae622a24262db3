"""A cross-encoder in NumPy: a question and a candidate passage read together, one relevance score out.

The model is BERT sequence classification on all-MiniLM-L6-v2's weights, fitted for code and docs questions by
``lab/rerank/fit.py`` and stored as one file (``sift/fitted/reranker.npz``; not shipped, and no product path reads
it: it has not beaten the ranker, ``lab/NOTEBOOK.md``): its first ``layers`` transformer
layers and a linear head to one logit, every matrix stored as int8 with a float32 scale per output row
and dequantised once at load, beside the BERT config and the tokenizer (``pack``), so the file is all it needs. The input is ``[CLS] question [SEP] passage [SEP]``, the passage as token type 1; the
score is the head's logit over the mean of the last hidden states of the pair's tokens (``score``), higher is
more relevant.

A long candidate does not fit the model's window, so ``window`` picks which of its lines to show: its first line
(a signature or a heading) and the run of following lines that holds the most of the question's words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sift.bert import Bert, single_threaded_blas, token_id
from sift.tokenize import tokenize


def words(text: str) -> set[str]:
    """The distinct search terms of ``text`` (``sift.tokenize``: identifiers split, stemmed, stop words out)."""
    return set(tokenize(text))


def window(question: str, lines: Sequence[str], budget: int, cost: Sequence[int]) -> list[int]:
    """Which of a candidate's ``lines`` to show within ``budget`` tokens, ``cost[i]`` being line i's tokens.

    All of them when they fit. Otherwise the first line, then the contiguous run of later lines, fitting in what
    is left, that holds the most distinct question words (the earliest such run on a tie); lines are never cut.
    """
    if sum(cost) <= budget or not lines:
        return list(range(len(lines)))
    wanted = words(question)
    left = budget - cost[0]
    hits = [words(line) & wanted for line in lines]
    best: tuple[int, int, int] = (-1, 1, 1)  # (distinct words, start, end)
    end = 1
    used = 0
    for start in range(1, len(lines)):
        if end < start:
            end, used = start, 0
        while end < len(lines) and used + cost[end] <= left:
            used += cost[end]
            end += 1
        found = len(set().union(*hits[start:end])) if end > start else 0
        if found > best[0]:
            best = (found, start, end)
        if end > start:
            used -= cost[start]
    _, start, end = best
    return [0, *range(start, end)]


def passage(tokenizer: Any, info: RerankerInfo, question: str, header: str, lines: Sequence[str]) -> str:
    """``header`` (where the candidate is) and the lines of the candidate that ``window`` picks for ``question``,
    in the room the model's input leaves after the question."""
    costs = [len(enc.ids) for enc in tokenizer.encode_batch([header, *lines], add_special_tokens=False)]
    budget = info.max_tokens - 3 - info.question_tokens - costs[0]
    keep = window(question, lines, budget, costs[1:])
    return "\n".join([header, *(lines[i] for i in keep)])


@dataclass(frozen=True)
class RerankerInfo:
    """What the fitted file says about itself (its ``meta`` entry)."""

    layers: int
    max_tokens: int  # the whole input, special tokens included
    question_tokens: int  # at most this many of the question's
    base_model: str
    meta: Mapping[str, Any]


def pack(tensors: Mapping[str, np.ndarray], info: RerankerInfo, config: Mapping[str, Any], tokenizer_json: str,
         exact: bool = False) -> dict[str, np.ndarray]:
    """The entries of a fitted file: the weights (int8 unless ``exact``), ``meta`` (``info``'s numbers and
    ``meta``, and the BERT ``config``) and the tokenizer's JSON, so that the file is all the model needs."""
    meta = dict(info.meta) | {"layers": info.layers, "max_tokens": info.max_tokens,
                              "question_tokens": info.question_tokens, "base_model": info.base_model,
                              "config": dict(config)}
    weights = {k: np.asarray(v, dtype=np.float32) for k, v in tensors.items()} if exact else quantise(tensors)
    return weights | {"meta": np.array(json.dumps(meta, sort_keys=True)), "tokenizer": np.array(tokenizer_json)}


def dequantise(stored: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The fitted file's tensors as float32: int8 matrices times their ``NAME:scale`` rows, the rest as stored."""
    out: dict[str, np.ndarray] = {}
    for name, value in stored.items():
        if name.endswith(":scale") or name in ("meta", "tokenizer"):
            continue
        if value.dtype == np.int8:
            out[name] = value.astype(np.float32) * stored[name + ":scale"][:, None]
        else:
            out[name] = np.asarray(value, dtype=np.float32)
    return out


def quantise(tensors: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """int8 per output row (symmetric) for every matrix, float32 for vectors: what ``dequantise`` reads."""
    out: dict[str, np.ndarray] = {}
    for name, value in tensors.items():
        value = np.asarray(value, dtype=np.float32)
        if value.ndim == 2 and value.shape[0] > 1:
            scale = np.abs(value).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            out[name] = np.clip(np.rint(value / scale[:, None]), -127, 127).astype(np.int8)
            out[name + ":scale"] = scale.astype(np.float32)
        else:
            out[name] = value
    return out


class CrossEncoder:
    """Scores ``(question, passage)`` pairs; loaded once per process, thread-safe after loading."""

    def __init__(self, fitted: Path) -> None:
        from tokenizers import Tokenizer

        with np.load(fitted) as z:
            stored = {name: z[name] for name in z.files}
        meta = json.loads(str(stored["meta"]))
        self.info = RerankerInfo(int(meta["layers"]), int(meta["max_tokens"]), int(meta["question_tokens"]),
                                 str(meta["base_model"]), meta)
        tensors = dequantise(stored)
        self.bert = Bert(meta["config"], tensors, self.info.max_tokens, layers=self.info.layers, prefix="bert.")
        self.classifier = (tensors["classifier.weight"][0], float(tensors["classifier.bias"][0]))
        tokenizer = Tokenizer.from_str(str(stored["tokenizer"]))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        self.tokenizer = tokenizer
        self.cls_id = token_id(tokenizer, "[CLS]")
        self.sep_id = token_id(tokenizer, "[SEP]")

    def passage(self, question: str, header: str, lines: Sequence[str]) -> str:
        """The text scored for a candidate: ``header`` and the lines ``window`` picks (see ``passage``)."""
        return passage(self.tokenizer, self.info, question, header, lines)

    def encode(self, question: str, passages: Sequence[str]) -> tuple[list[list[int]], list[list[int]]]:
        """Token ids and token types of each ``[CLS] question [SEP] passage [SEP]``, cut to ``max_tokens``."""
        q = self.tokenizer.encode(question, add_special_tokens=False).ids[: self.info.question_tokens]
        room = self.info.max_tokens - len(q) - 3
        ids, types = [], []
        for enc in self.tokenizer.encode_batch(list(passages), add_special_tokens=False):
            p = enc.ids[:room]
            ids.append([self.cls_id, *q, self.sep_id, *p, self.sep_id])
            types.append([0] * (len(q) + 2) + [1] * (len(p) + 1))
        return ids, types

    def score(self, question: str, passages: Sequence[str], threads: int = 1) -> np.ndarray:
        """One relevance logit per passage, in input order."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        ids, types = self.encode(question, passages)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        parts = [order[i::threads] for i in range(max(1, min(threads, len(ids))))]
        out = np.empty(len(ids), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = self.logits([ids[i] for i in rows], [types[i] for i in rows])

        with single_threaded_blas():
            if len(parts) == 1:
                run(parts[0])
            else:
                with ThreadPoolExecutor(len(parts), thread_name_prefix="sift-rerank") as pool:
                    list(pool.map(run, parts))
        return out

    def logits(self, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]]) -> np.ndarray:
        """The classifier's logit for each tokenized pair (one forward pass)."""
        x, runs, order = self.bert.run(ids, types)
        pooled = np.empty((len(ids), self.bert.hidden), dtype=np.float32)
        k = 0
        for run in runs:
            part = x[run.start : run.start + run.count * run.n].reshape(run.count, run.n, self.bert.hidden)
            if run.mask is None:
                pooled[k : k + run.count] = part.mean(1)
            else:
                pooled[k : k + run.count] = np.einsum("cnh,cn->ch", part, run.mask) / run.mask.sum(1, keepdims=True)
            k += run.count
        weight, bias = self.classifier
        laid_out = pooled @ weight + bias
        out = np.empty(len(ids), dtype=np.float32)
        out[order] = laid_out
        return out
