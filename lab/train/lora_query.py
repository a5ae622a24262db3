"""Does a LoRA adapter on MiniLM's query side beat the linear query adapter? Both leave documents as indexed.

    python lab/fit/query_adapter.py      # first: it ingests the train packages' cloze copies
    python lab/train/lora_query.py         # then: needs torch (the test extra, or PyTorch's CPU build)
    python lab/train/lora_query.py --protocols written --rank 8 --targets query,value --lr 1e-3  # another LoRA
    python lab/train/lora_query.py --oof bench/out/ranker/lora-oof.npz  # cross-fitted vectors for the ranker:
    python lab/fit/ranker.py --query-vectors bench/out/ranker/lora-oof.npz  # fused search held out with them

The ranking issue asks to adapt MiniLM to code search with the mined pairs, "either as a linear query adapter
or a LoRA adapter". The linear one ships (``sift/query_adapter.py``); this measures the other. LoRA adds a
trained low-rank ``B A`` to chosen weight matrices of every layer (``TARGETS``), and only queries go through
the adapted model, so no knowledge base is embedded again, as with the linear adapter.

Both are fitted with the same loss as ``lab/fit/query_adapter.py``: the softmax cross-entropy of a
question's positive chunks among all chunks of its package under ``SCALE · q · d``, every kind of pair weighing
the same. The linear one with its committed penalty (``LINEAR_LAMBDA``); LoRA by AdamW for ``EPOCHS`` passes
(warm-up, then linear decay), starting from the bare model (``B = 0``). Two protocols, each printing the bare
model, the linear adapter and LoRA side by side, as span MRR (top 10) of the vector channel alone:

- ``mined``: 4-fold over train packages (the adapter script's folds). Scored on the held-out packages' mined
  questions, and on the written questions of the dev and spent test sets (people's wording, other projects).
- ``written``: 4-fold over the 13 written-question projects, each fit on all mined questions
  plus the other projects' written questions (one more kind of pair), scored on the held-out projects.

The test sets are never read. Seeded: a run on one machine repeats itself; across machines, float sums in
torch's kernels may differ in the last bits.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sqlite3  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from lab.fit import query_adapter as fqa  # noqa: E402  (the adapter's loss, folds, corpora and question vectors)
from lab.fit import ranker as fr  # noqa: E402  (the train questions, their cloze copies, the written questions)

# The configuration under test, the best on the written questions of one mined fold of five tried there (rank 8
# on query and value at lr 1e-3 for 2 and 4 epochs, at 3e-4 for 2; rank 8 on every matrix at 1e-3; this one).
RANK = 16
TARGETS = ("query", "key", "value", "out", "up", "down")
EPOCHS = 2.0
LEARNING_RATE = 3e-4
BATCH = 32
WARMUP = 50  # steps
SEED = 0
LINEAR_LAMBDA = 0.03  # the committed linear adapter's penalty (sift/fitted/query_adapter.npz)
_MATRICES = {"query": "attention.self.query", "key": "attention.self.key", "value": "attention.self.value",
             "out": "attention.output.dense", "up": "intermediate.dense", "down": "output.dense"}


@dataclass(frozen=True)
class Config:
    rank: int = RANK
    targets: tuple[str, ...] = TARGETS
    epochs: float = EPOCHS
    lr: float = LEARNING_RATE


class TorchMiniLM:
    """The packaged MiniLM's forward pass in torch (what ``sift.minilm`` computes in NumPy), with optional LoRA
    deltas; mean-pooled, L2-normalised vectors. Its weights are frozen."""

    def __init__(self, model_dir: Path) -> None:
        import torch

        from sift.minilm import read_safetensors

        w = read_safetensors(model_dir / "model.safetensors")
        pre = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""

        def t(name: str) -> Any:
            return torch.from_numpy(np.array(w[pre + name], dtype=np.float32))

        config = json.loads((model_dir / "config.json").read_text())
        self.hidden, self.heads = int(config["hidden_size"]), int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.word = t("embeddings.word_embeddings.weight")
        self.position = t("embeddings.position_embeddings.weight") + t("embeddings.token_type_embeddings.weight")[0]
        self.emb_ln = (t("embeddings.LayerNorm.weight"), t("embeddings.LayerNorm.bias"))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            self.layers.append({k: (t(p + v + ".weight"), t(p + v + ".bias")) for k, v in _MATRICES.items()} | {
                "ln1": (t(p + "attention.output.LayerNorm.weight"), t(p + "attention.output.LayerNorm.bias")),
                "ln2": (t(p + "output.LayerNorm.weight"), t(p + "output.LayerNorm.bias"))})

    def new_lora(self, config: Config) -> dict[tuple[int, str], tuple[Any, Any]]:
        """``(A, B)`` per (layer, matrix): A random (seeded), B zero, so training starts at the bare model."""
        import torch

        g = torch.Generator().manual_seed(SEED)
        out = {}
        for i, layer in enumerate(self.layers):
            for name in config.targets:
                fan_out, fan_in = layer[name][0].shape
                a = torch.randn(config.rank, fan_in, generator=g) / math.sqrt(fan_in)
                out[(i, name)] = (a.requires_grad_(), torch.zeros(fan_out, config.rank, requires_grad=True))
        return out

    def __call__(self, ids: Sequence[Sequence[int]], lora: dict | None = None) -> Any:
        import torch
        import torch.nn.functional as F  # noqa: N812

        n, count, h = max(len(x) for x in ids), len(ids), self.hidden
        tok = torch.zeros(count, n, dtype=torch.long)
        mask = torch.zeros(count, n)
        for j, x in enumerate(ids):
            tok[j, : len(x)] = torch.tensor(list(x))
            mask[j, : len(x)] = 1

        def dense(x: Any, i: int, name: str) -> Any:
            w, b = self.layers[i][name]
            y = x @ w.T + b
            if lora is not None and (i, name) in lora:
                a, bb = lora[(i, name)]
                y = y + (x @ a.T) @ bb.T
            return y

        def heads(x: Any) -> Any:
            return x.view(count, n, self.heads, h // self.heads).transpose(1, 2)

        x = F.layer_norm(self.word[tok] + self.position[:n][None], (h,), *self.emb_ln, eps=self.eps)
        bias = (1 - mask)[:, None, None, :] * -1e9
        for i, layer in enumerate(self.layers):
            q, k, v = (heads(dense(x, i, name)) for name in ("query", "key", "value"))
            s = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + bias
            c = (s.softmax(-1) @ v).transpose(1, 2).reshape(count, n, h)
            x = F.layer_norm(dense(c, i, "out") + x, (h,), *layer["ln1"], eps=self.eps)
            x = F.layer_norm(dense(F.gelu(dense(x, i, "up")), i, "down") + x, (h,), *layer["ln2"], eps=self.eps)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return F.normalize(pooled, dim=-1)


@dataclass
class Data:
    model: TorchMiniLM
    corpora: dict[str, fqa.Corpus]
    mined: list[fqa.Question]
    written: list[fqa.Question]  # source: the split; kb: the project
    ids: dict[str, list[int]]  # question id → token ids


def load() -> Data:
    """The train questions (cloze copies, ingested by ``lab/fit/query_adapter.py``) and the written ones, embedded."""
    from lab.train.make_pairs import fetch, load_packages
    from sift.config import Settings
    from sift.embed import LocalEmbedder

    packages = load_packages()
    train, _ = fr._cloze(packages, fr._train_questions(packages, None), fetch)
    newcomer = fr.newcomer_questions()
    embedder = LocalEmbedder(query_adapter=False)
    settings = Settings(data_dir=fr.OUT / "data")
    db = sqlite3.connect(settings.data_dir / "sift.db")
    kbs = sorted({q["kb"] for q in train} | {q.kb for qs in newcomer.values() for q in qs})
    corpora = {kb: fqa._corpus(db, settings.resolved_index_dir(), kb) for kb in kbs}
    rows = [(q["id"], q["query"], q["kb"], q["source"], fr._gold(q["gold_spans"])) for q in train]
    written = [(q.id, q.query, q.kb, split, fr._gold(q.gold_spans)) for split, qs in newcomer.items() for q in qs]
    ids = dict(zip([r[0] for r in rows + written], embedder.encoder.tokenize([r[1] for r in rows + written]),
                   strict=True))
    return Data(TorchMiniLM(embedder.model_path), corpora, fqa._questions(rows, corpora, embedder),
                fqa._questions(written, corpora, embedder), ids)


def embed(data: Data, questions: list[fqa.Question], lora: dict | None) -> np.ndarray:
    """The questions' vectors through the (adapted) torch model."""
    import torch

    with torch.no_grad():
        return np.vstack([data.model([data.ids[q.qid] for q in questions[s : s + 128]], lora).numpy()
                          for s in range(0, len(questions), 128)])


def train_lora(data: Data, questions: list[fqa.Question], config: Config) -> dict:
    """LoRA deltas minimising the adapter's loss (see the module docstring); deterministic for one seed."""
    import torch

    torch.manual_seed(SEED)
    lora = data.model.new_lora(config)
    params = [p for pair in lora.values() for p in pair]
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.0)
    by_source = fqa.source_weights(questions, total=len(questions))
    weight = [by_source[q.source] for q in questions]
    docs = {kb: torch.from_numpy(c.vectors) for kb, c in data.corpora.items()}
    steps = int(config.epochs * len(questions) / BATCH)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / WARMUP) * max(0.0, 1 - s / steps))
    rng = np.random.default_rng(SEED)
    order = np.concatenate([rng.permutation(len(questions)) for _ in range(math.ceil(config.epochs) + 1)])
    for step in range(steps):
        batch = order[step * BATCH : (step + 1) * BATCH]
        vectors = data.model([data.ids[questions[i].qid] for i in batch], lora)
        loss = vectors.new_zeros(())
        for j, i in enumerate(batch):
            q = questions[i]
            z = fqa.SCALE * (docs[q.kb] @ vectors[j])
            loss = loss + weight[i] * (torch.logsumexp(z, 0) - torch.logsumexp(z[torch.from_numpy(q.positive)], 0))
        opt.zero_grad()
        (loss / len(batch)).backward()
        opt.step()
        sched.step()
    return lora


def span_mrr(data: Data, questions: list[fqa.Question], vectors: Any) -> float:
    """The questions' span MRR (top ``fqa.TOP``) under the given query vectors, macro over kinds of pair."""
    return fqa.by_kind(questions, fqa.ranks_of(questions, data.corpora, vectors))["macro"]


def compare(data: Data, fit_on: list[fqa.Question], scored: dict[str, list[fqa.Question]],
            config: Config) -> dict[str, dict[str, float]]:
    """Bare, linear and LoRA span MRR on each named list of questions (macro over kinds of pair)."""
    a = fqa.fit(fit_on, data.corpora, LINEAR_LAMBDA)
    lora = train_lora(data, fit_on, config)
    out: dict[str, dict[str, float]] = {}
    for name, questions in scored.items():
        bare = np.stack([q.vector for q in questions])
        vectors = {"bare": bare, "linear": bare @ a.T, "lora": embed(data, questions, lora)}
        out[name] = {k: span_mrr(data, questions, v) for k, v in vectors.items()}
    return out


def as_written(questions: list[fqa.Question]) -> list[fqa.Question]:
    """Written questions as one kind of pair (their split names would make five kinds of them)."""
    return [fqa.Question(q.qid, q.kb, "written", q.vector, q.positive) for q in questions]


def cross_fit(data: Data, config: Config, t0: float) -> dict[str, np.ndarray]:
    """Every question's vector from a LoRA fitted without its project or package, for the ranker's fit
    (``lab/fit/ranker.py --query-vectors``): written questions by 4 folds over their projects (each LoRA
    fitted on all mined questions and the other folds' written ones), mined questions by the 4 package folds
    (each fitted on the other packages' mined questions and all written ones). In-sample vectors would show the
    ranker a vector channel better than it is on a new project."""
    written = as_written(data.written)
    out: dict[str, np.ndarray] = {}
    for what, questions in (("written", written), ("mined", data.mined)):
        for held in fqa.package_folds([q.kb for q in questions]):
            if what == "written":  # the mined questions first, as in the written protocol
                fit_on = data.mined + [q for q in written if q.kb not in held]
            else:
                fit_on = [q for q in data.mined if q.kb not in held] + written
            lora = train_lora(data, fit_on, config)
            mine = [q for q in questions if q.kb in held]
            vectors = {"bare": np.stack([q.vector for q in mine]), "lora": embed(data, mine, lora)}
            fold = {k: span_mrr(data, mine, v) for k, v in vectors.items()}
            out.update(zip([q.qid for q in mine], vectors["lora"], strict=True))
            print(f"cross-fit, {what} held out ({len(held)} projects): {fold} ({time.perf_counter() - t0:.0f}s)",
                  flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocols", default="mined,written", help="which of the two to run (default: both)")
    ap.add_argument("--rank", type=int, default=RANK)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--epochs", type=float, default=EPOCHS)
    ap.add_argument("--lr", type=float, default=LEARNING_RATE)
    ap.add_argument("--oof", type=Path, default=None,
                    help="instead: write every question's cross-fitted vector here (see cross_fit)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(min(2, os.cpu_count() or 1))
    config = Config(args.rank, tuple(args.targets.split(",")), args.epochs, args.lr)
    t0 = time.perf_counter()
    data = load()
    print(f"{len(data.mined)} mined questions, {len(data.written)} written; {config} "
          f"({time.perf_counter() - t0:.0f}s)", flush=True)
    if args.oof is not None:
        vectors = cross_fit(data, config, t0)
        ids = sorted(vectors)
        np.savez(args.oof, ids=np.array(ids), vectors=np.stack([vectors[i] for i in ids]))
        print(f"wrote {len(ids)} question vectors to {args.oof} ({time.perf_counter() - t0:.0f}s)")
        return
    results: dict[str, list[dict[str, dict[str, float]]]] = {"mined": [], "written": []}
    protocols = set(args.protocols.split(","))
    for held in fqa.package_folds([q.kb for q in data.mined]) if "mined" in protocols else []:
        r = compare(data, [q for q in data.mined if q.kb not in held],
                    {"held-out packages": [q for q in data.mined if q.kb in held], "written": data.written}, config)
        results["mined"].append(r)
        print(f"mined fold {sorted(held)[:2]}…: {json.dumps(r)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    if "written" in protocols:
        for held in fqa.package_folds([q.kb for q in data.written]):
            fit_on = data.mined + as_written([q for q in data.written if q.kb not in held])
            r = compare(data, fit_on, {"held-out projects": [q for q in data.written if q.kb in held]}, config)
            results["written"].append(r)
            print(f"written fold {sorted(held)}: {json.dumps(r)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    for protocol, runs in results.items():
        for name in (runs[0] if runs else {}):
            mean = {m: round(float(np.mean([r[name][m] for r in runs])), 4) for m in ("bare", "linear", "lora")}
            print(f"{protocol} protocol, {name}, mean of {len(runs)} folds: {mean}")


if __name__ == "__main__":
    main()
