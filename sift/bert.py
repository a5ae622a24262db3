"""BERT's encoder stack in NumPy: embeddings and transformer layers, without torch or transformers.

The local model's core: ``sift.minilm`` (all-MiniLM-L6-v2, mean-pooled sentence vectors); the lab's
cross-encoder (``lab/rerank/encoder.py``, not shipped) runs on it too. Weights are read from
safetensors through a memory map, so only the rows of the word-embedding table that texts use are ever read.
Texts run in batches of similar length as float32 BLAS matmuls, one core per batch (``single_threaded_blas``).
"""

from __future__ import annotations

import json
import math
import mmap
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file as read-only arrays over a memory map of it.

    The format is an 8-byte little-endian header length, a JSON header (name → dtype, shape, byte offsets
    into the data that follows) and the raw little-endian data.
    """
    with open(path, "rb") as f:
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    (size,) = np.frombuffer(buf, dtype="<u8", count=1)
    header = json.loads(bytes(buf[8 : 8 + int(size)]))
    base = 8 + int(size)
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] not in _ST_DTYPES:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        dtype = np.dtype(_ST_DTYPES[info["dtype"]]).newbyteorder("<")
        start, end = info["data_offsets"]
        count = (end - start) // dtype.itemsize
        out[name] = np.frombuffer(buf, dtype=dtype, count=count, offset=base + start).reshape(info["shape"])
    return out


@dataclass(frozen=True)
class _Run:
    """``count`` texts of at most ``n`` tokens, each padded to ``n`` rows, from row ``start`` on."""

    start: int
    count: int
    n: int
    heads: int  # attention heads computed at a time
    mask: np.ndarray | None  # (count, n): 1 for real tokens; None when no text is padded
    bias: np.ndarray | None  # (count, 1, 1, n): the additive key mask (the dtype's minimum on padding)


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (hidden, 3*hidden); the query third pre-scaled by 1/sqrt(head_dim)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


class Bert:
    """Embeddings plus the first ``layers`` transformer layers of a BERT model (all of them by default).

    ``run(ids, types)`` gives every token's last hidden state, laid out in runs of similar length; the models
    built on it pool those states their own way. Thread-safe: nothing is mutated after loading.
    """

    def __init__(self, config: Mapping[str, Any], tensors: Mapping[str, np.ndarray], max_tokens: int,
                 layers: int | None = None, prefix: str = "") -> None:
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError("not a BERT model with exact GELU")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.head_dim = self.hidden // self.heads
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = max_tokens

        def get(name: str) -> np.ndarray:
            return tensors[prefix + name]

        def f32(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a, dtype=np.float32)

        self.word = get("embeddings.word_embeddings.weight")  # memory-mapped: (vocab, hidden)
        if self.word.dtype != np.float32:
            self.word = f32(self.word)
        types = f32(get("embeddings.token_type_embeddings.weight"))
        # token type 0 folded into the position table; a second segment's tokens add the difference
        self.position = f32(get("embeddings.position_embeddings.weight")[:max_tokens]) + types[0]
        self.second_segment = types[1] - types[0] if len(types) > 1 else None
        self.emb_ln = (f32(get("embeddings.LayerNorm.weight")), f32(get("embeddings.LayerNorm.bias")))
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        self.layers: list[_Layer] = []
        for i in range(int(config["num_hidden_layers"]) if layers is None else layers):
            p = f"encoder.layer.{i}."
            q_w, q_b = get(p + "attention.self.query.weight") * scale, get(p + "attention.self.query.bias") * scale
            k_w, k_b = get(p + "attention.self.key.weight"), get(p + "attention.self.key.bias")
            v_w, v_b = get(p + "attention.self.value.weight"), get(p + "attention.self.value.bias")
            self.layers.append(_Layer(
                qkv_w=f32(np.concatenate([q_w, k_w, v_w]).T), qkv_b=f32(np.concatenate([q_b, k_b, v_b])),
                out_w=f32(get(p + "attention.output.dense.weight").T), out_b=f32(get(p + "attention.output.dense.bias")),
                ln1_w=f32(get(p + "attention.output.LayerNorm.weight")),
                ln1_b=f32(get(p + "attention.output.LayerNorm.bias")),
                # The intermediate activations are computed scaled by _GELU_IN (see _gelu), undone by down_w.
                up_w=f32(get(p + "intermediate.dense.weight").T * _GELU_IN),
                up_b=f32(get(p + "intermediate.dense.bias") * _GELU_IN),
                down_w=f32(get(p + "output.dense.weight").T / _GELU_IN), down_b=f32(get(p + "output.dense.bias")),
                ln2_w=f32(get(p + "output.LayerNorm.weight")), ln2_b=f32(get(p + "output.LayerNorm.bias")),
            ))

    def run(self, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]] | None = None
            ) -> tuple[np.ndarray, list[_Run], list[int]]:
        """Every token's last hidden state: ``(x, runs, order)``, where text ``order[k]`` is the k-th laid out.

        Texts are laid out longest first in runs of similar length, each padded to its longest text (a run pads
        at most an eighth of its length, or 16 tokens), so the dense layers see few padding rows and attention
        is one batched product per run, masked only where a run has padding. ``types`` (0 or 1 per token) marks
        a second segment, as BERT's token type ids do.
        """
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        runs = self._runs([len(ids[i]) for i in order])
        rows = sum(run.count * run.n for run in runs)
        tok = np.zeros(rows, dtype=np.int64)  # [PAD] is id 0
        pos = np.empty(rows, dtype=np.int64)
        second = np.zeros(rows, dtype=bool) if types is not None else None
        k = 0
        for run in runs:
            for i in range(run.count):
                row = ids[order[k]]
                base = run.start + i * run.n
                tok[base : base + len(row)] = row
                pos[base : base + run.n] = np.arange(run.n)
                if second is not None and types is not None:
                    second[base : base + len(row)] = np.asarray(types[order[k]], dtype=bool)
                k += 1
        x = self.word[tok]
        x += self.position[pos]
        if second is not None and second.any():
            if self.second_segment is None:
                raise ValueError("this model has one token type only")
            x[second] += self.second_segment
        self._layer_norm(x, *self.emb_ln)
        for layer in self.layers:
            x = self._layer(x, layer, runs)
        return x, runs, order

    def _runs(self, lengths: list[int]) -> list[_Run]:
        """Runs of consecutive texts (lengths in decreasing order) padded to their first text's length, each
        small enough that its attention scores fit in cache."""
        if min(lengths) < 1:
            raise ValueError("every text needs at least one token")
        runs: list[_Run] = []
        i, start = 0, 0
        while i < len(lengths):
            n = lengths[i]
            fit = max(1, _CACHE_FLOATS // (self.heads * n * n))
            j = i + 1
            while j < len(lengths) and j - i < fit and n - lengths[j] <= max(n // 8, 16):
                j += 1
            mask = bias = None
            if lengths[j - 1] < n:
                mask = (np.arange(n)[None, :] < np.asarray(lengths[i:j])[:, None]).astype(np.float32)
                bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
            # Whole runs of one text whose scores still do not fit go through attention a few heads at a time.
            heads = self.heads if fit > 1 else max(1, _CACHE_FLOATS // (n * n))
            runs.append(_Run(start, j - i, n, heads, mask, bias))
            start += (j - i) * n
            i = j
        return runs

    def _layer(self, x: np.ndarray, p: _Layer, runs: list[_Run]) -> np.ndarray:
        nh, hd = self.heads, self.head_dim
        qkv = x @ p.qkv_w
        qkv += p.qkv_b
        ctx = np.empty_like(x)
        for run in runs:
            part = qkv[run.start : run.start + run.count * run.n].reshape(run.count, run.n, 3, nh, hd)
            out = ctx[run.start : run.start + run.count * run.n].reshape(run.count, run.n, nh, hd)
            for h0 in range(0, nh, run.heads):
                hs = slice(h0, h0 + run.heads)
                q = np.ascontiguousarray(part[:, :, 0, hs].transpose(0, 2, 1, 3))  # (count, heads, n, hd)
                k = np.ascontiguousarray(part[:, :, 1, hs].transpose(0, 2, 3, 1))  # (count, heads, hd, n)
                v = np.ascontiguousarray(part[:, :, 2, hs].transpose(0, 2, 1, 3))
                scores = q @ k  # already scaled through the query weights
                if run.bias is not None:
                    scores += run.bias
                scores -= scores.max(-1, keepdims=True)
                np.exp(scores, out=scores)
                total = scores.sum(-1, keepdims=True)
                r = scores @ v
                r /= total  # softmax's division, on (n, hd) instead of (n, n)
                out[:, :, hs] = r.transpose(0, 2, 1, 3)
        a = ctx @ p.out_w
        a += p.out_b
        a += x
        x = self._layer_norm(a, p.ln1_w, p.ln1_b)
        out = np.empty_like(x)
        up = np.empty((min(_FFN_ROWS, len(x)), p.up_w.shape[1]), dtype=np.float32)
        scratch = [np.empty((_GELU_ROWS, up.shape[1]), dtype=np.float32) for _ in range(3)]
        for s in range(0, len(x), _FFN_ROWS):
            n = min(_FFN_ROWS, len(x) - s)
            np.matmul(x[s : s + n], p.up_w, out=up[:n])
            up[:n] += p.up_b
            for g in range(0, n, _GELU_ROWS):
                m = min(_GELU_ROWS, n - g)
                _gelu(up[g : g + m], *(a[:m] for a in scratch))
            np.matmul(up[:n], p.down_w, out=out[s : s + n])
        out += p.down_b
        out += x
        return self._layer_norm(out, p.ln2_w, p.ln2_b)

    def _layer_norm(self, x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """LayerNorm over the last axis of a 2-d array, in place."""
        x -= x.mean(-1, keepdims=True)
        var = np.einsum("ij,ij->i", x, x)[:, None]
        var /= np.float32(x.shape[-1])
        var += np.float32(self.eps)
        np.sqrt(var, out=var)
        x /= var
        x *= weight
        x += bias
        return x



_CACHE_FLOATS = 1 << 17  # 512 KiB of float32: a working set that stays in a core's L2 cache
_FFN_ROWS = 256  # tokens per feed-forward matmul (smaller blocks cost BLAS efficiency)
_GELU_ROWS = 32  # tokens per GELU step: its ~18 passes over (rows, 4*hidden) run in L1/L2

# erfc(z) = poly(u) * exp(-z*z) with u = 1 / (1 + P*z), z >= 0 (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7;
# torch's vectorised CPU erf uses the same approximation). GELU(x) = x * (1 + erf(x/sqrt(2))) / 2
# = max(x, 0) - |x| * erfc(|x|/sqrt(2)) / 2. The model computes w = x * P/sqrt(2) instead of x (folded into the
# intermediate weights), so that P*z = |w| and z*z = w*w / P^2, and _gelu returns GELU(x) * P/sqrt(2), which the
# output weights undo.
_ERFC_P = 0.3275911
_GELU_IN = np.float32(_ERFC_P / math.sqrt(2))
_EXP_SCALE = np.float32(-1 / _ERFC_P**2)
_ERFC_HALF_A = [np.float32(c / 2) for c in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)]


def _gelu(w: np.ndarray, a: np.ndarray, u: np.ndarray, y: np.ndarray) -> None:
    """``w`` = x * P/sqrt(2) becomes GELU(x) * P/sqrt(2), in place; ``a``, ``u``, ``y`` are scratch arrays."""
    np.abs(w, out=a)  # P*z
    np.add(a, 1.0, out=u)
    np.reciprocal(u, out=u)
    np.multiply(u, _ERFC_HALF_A[4], out=y)
    for c in _ERFC_HALF_A[3::-1]:
        y += c
        y *= u
    y *= a  # P*z * poly(u) / 2
    np.square(a, out=u)
    u *= _EXP_SCALE
    np.exp(u, out=u)  # exp(-z*z)
    y *= u  # |w| * erfc(z) / 2
    np.maximum(w, 0.0, out=w)
    w -= y


_blas_lock = threading.Lock()
_blas_users = 0
_blas_controller: Any = None  # the BLAS libraries loaded when the encoder first ran (numpy's among them)
_blas_limiter: Any = None


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """BLAS calls run on the calling thread only while any thread is inside this block.

    The encoder runs its matmuls on one core each and gets parallelism from running batches side by side:
    OpenBLAS's own thread team spins while it waits, which on a busy machine (or next to a second team)
    costs far more CPU than it saves. The limit is process-wide (BLAS libraries have no per-thread one),
    so it is set when the first thread enters and lifted when the last one leaves.
    """
    global _blas_users, _blas_controller, _blas_limiter
    with _blas_lock:
        if _blas_users == 0:
            if _blas_controller is None:
                from threadpoolctl import ThreadpoolController

                _blas_controller = ThreadpoolController()  # finding the libraries takes ~0.5 ms: once
            _blas_limiter = _blas_controller.limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON file's object, or an empty one where the file is missing."""
    return json.loads(path.read_text()) if path.is_file() else {}


def token_id(tokenizer: Any, token: str) -> int:
    """The id of a special token, which the tokenizer must have."""
    i = tokenizer.token_to_id(token)
    if i is None:
        raise ValueError(f"tokenizer has no {token} token")
    return int(i)
