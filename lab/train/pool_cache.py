"""The ranker fit's pooled candidates on disk: each split's groups as flat arrays in one ``.npz`` file.

``lab/fit/ranker.py`` pools every question's candidates once (searching all channels is the slow part) and
caches them here under a key of everything they depend on; ``lab/train/ranker_trees.py`` reads the same file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lab.train.ranker_fit import Group
from sift.retrievers.ranker import FEATURES


def save_pool(path: Path, splits: dict[str, list[Group]]) -> None:
    """Write the groups of each split as flat arrays (paths and kinds as indexes into shared tables)."""
    paths: dict[str, int] = {}
    kinds: dict[str, int] = {}
    arrays: dict[str, np.ndarray] = {}
    for split, groups in splits.items():
        spans = [s for g in groups for s in g.spans]
        gold = [s for g in groups for s in g.gold]
        arrays |= {
            f"{split}_qid": np.array([g.qid for g in groups]),
            f"{split}_size": np.array([len(g.y) for g in groups], np.int64),
            f"{split}_x": np.vstack([g.x for g in groups]),
            f"{split}_y": np.concatenate([g.y for g in groups]),
            f"{split}_path": np.array([paths.setdefault(p, len(paths)) for p, _, _, _ in spans], np.int64),
            f"{split}_lines": np.array([(s, e) for _, s, e, _ in spans], np.int64).reshape(len(spans), 2),
            f"{split}_kind": np.array([kinds.setdefault(k, len(kinds)) for _, _, _, k in spans], np.int64),
            f"{split}_gold_size": np.array([len(g.gold) for g in groups], np.int64),
            f"{split}_gold_path": np.array([paths.setdefault(p, len(paths)) for p, _, _ in gold], np.int64),
            f"{split}_gold_lines": np.array([(s, e) for _, s, e in gold], np.int64).reshape(len(gold), 2),
        }
    arrays |= {"paths": np.array(list(paths)), "kinds": np.array(list(kinds)), "features": np.array(FEATURES)}
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]
    tmp.replace(path)
    for stale in path.parent.glob("pool-*.npz"):
        if stale != path:
            stale.unlink()


def load_pool(path: Path) -> dict[str, list[Group]]:
    """The groups ``save_pool`` wrote, split by split."""
    with np.load(path) as z:
        if tuple(z["features"]) != FEATURES:
            raise SystemExit(f"{path} holds other features than FEATURES; delete it or run with --no-cache")
        paths, kinds = z["paths"].tolist(), z["kinds"].tolist()
        out: dict[str, list[Group]] = {}
        for split in [str(n).removesuffix("_qid") for n in z.files if str(n).endswith("_qid")]:
            x, y = z[f"{split}_x"], z[f"{split}_y"]
            col = {name: z[f"{split}_{name}"].tolist() for name in ("path", "lines", "kind", "gold_path", "gold_lines",
                                                                    "qid", "size", "gold_size")}
            spans = [(paths[p], s, e, kinds[k]) for p, (s, e), k in zip(col["path"], col["lines"], col["kind"],
                                                                         strict=True)]
            gold = [(paths[p], s, e) for p, (s, e) in zip(col["gold_path"], col["gold_lines"], strict=True)]
            groups, at, gat = [], 0, 0
            for qid, n, gn in zip(col["qid"], col["size"], col["gold_size"], strict=True):
                groups.append(Group(str(qid), x[at:at + n], y[at:at + n], spans[at:at + n], gold[gat:gat + gn]))
                at, gat = at + n, gat + gn
            out[split] = groups
    return out
