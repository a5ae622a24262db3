"""A BERT sentence encoder in NumPy: all-MiniLM-L6-v2's forward pass without torch or transformers.

Reads a sentence-transformers model directory (``config.json``, ``tokenizer.json``, ``model.safetensors``,
``sentence_bert_config.json``, ``1_Pooling/config.json``), tokenizes with the ``tokenizers`` package and runs
the encoder (``sift.bert``) as float32 BLAS matmuls, then mean-pools over the attention mask and L2-normalises,
as sentence-transformers does.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from sift.bert import Bert, read_json, read_safetensors, single_threaded_blas, token_id

__all__ = ["MiniLMEncoder", "read_safetensors", "single_threaded_blas"]


class MiniLMEncoder:
    """Tokenizer + BERT encoder + mean pooling + L2 normalisation; ``encoder(texts)`` gives (n, dim) float32.

    Thread-safe: one instance may serve several threads at once (nothing is mutated after loading).
    """

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = read_json(model_dir / "config.json")
        st_config = read_json(model_dir / "sentence_bert_config.json")
        pooling = read_json(model_dir / "1_Pooling" / "config.json")
        if pooling and not pooling.get("pooling_mode_mean_tokens", False):
            raise ValueError(f"{model_dir}: only mean pooling is supported")
        if st_config.get("do_lower_case"):
            raise ValueError(f"{model_dir}: do_lower_case in sentence_bert_config.json is not supported")
        positions = int(config.get("max_position_embeddings", 512))
        self.max_tokens = min(int(st_config.get("max_seq_length", positions)), positions)

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.no_truncation()  # truncated here (see ``tokenize``), so offsets of the whole text are kept
        self.tokenizer = tokenizer
        self.cls_id = token_id(tokenizer, "[CLS]")
        self.sep_id = token_id(tokenizer, "[SEP]")
        w = read_safetensors(model_dir / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        try:
            self.bert = Bert(config, w, self.max_tokens, prefix=prefix)
        except ValueError as e:
            raise ValueError(f"{model_dir}: {e}") from None
        self.hidden = self.bert.hidden

    @property
    def dim(self) -> int:
        """Vector length."""
        return self.hidden

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids with [CLS] and [SEP], truncated to ``max_tokens`` (the first ``max_tokens - 2`` pieces)."""
        keep = self.max_tokens - 2
        return [[self.cls_id, *enc.ids[:keep], self.sep_id]
                for enc in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]

    def __call__(self, texts: Sequence[str], batch_size: int = 64, threads: int = 1) -> np.ndarray:
        """Normalised embeddings of ``texts`` (rows in input order), in batches of similar length."""
        return self.encode_ids(self.tokenize(texts), batch_size, threads)

    def encode_ids(self, ids: Sequence[Sequence[int]], batch_size: int = 64, threads: int = 1) -> np.ndarray:
        """Normalised embeddings of tokenized texts (each with its special tokens), ``batch_size`` texts of
        similar length per forward pass, ``threads`` passes at a time."""
        out = np.zeros((len(ids), self.hidden), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))  # longest first: batches pad little
        batches = [order[s : s + batch_size] for s in range(0, len(order), batch_size)]

        def run(rows: list[int]) -> None:
            out[rows] = self.forward([ids[i] for i in rows])

        with single_threaded_blas():
            if threads <= 1 or len(batches) <= 1:
                for rows in batches:
                    run(rows)
            else:
                with ThreadPoolExecutor(min(threads, len(batches)), thread_name_prefix="sift-embed") as pool:
                    for _ in pool.map(run, batches):
                        pass
        return out

    def forward(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """One batch through the model: (len(ids), hidden) normalised mean-pooled vectors."""
        if not ids:
            return np.zeros((0, self.hidden), dtype=np.float32)
        x, runs, order = self.bert.run(ids)
        pooled = np.empty((len(ids), self.hidden), dtype=np.float32)
        k = 0
        for run in runs:
            part = x[run.start : run.start + run.count * run.n].reshape(run.count, run.n, self.hidden)
            if run.mask is None:
                pooled[k : k + run.count] = part.sum(1)
            else:
                pooled[k : k + run.count] = np.einsum("cnh,cn->ch", part, run.mask)
            k += run.count
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True).clip(min=1e-12)  # the mean's 1/n cancels here
        out = np.empty_like(pooled)
        out[order] = pooled
        return out
