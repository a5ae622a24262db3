"""Generate the train question sets: fetch the pinned packages, parse them, write self-supervised pairs.

Run from the repository root::

    .venv/bin/python lab/train/make_pairs.py            # every package in lab/train/packages.json
    .venv/bin/python lab/train/make_pairs.py --only pluggy

Each package (pinned by name, version and sha256 in ``packages.json``) is downloaded once into the test cache
(``tests/sources.py``), parsed with sift's own parsers, and its pairs (``pairs.py``, ``calls.py``) are written
to ``tests/.cache/train/<package>.jsonl`` in the eval question format, with three extra keys: ``source`` (which
generator made the pair), ``target_kind`` (the node kind of the gold span) and ``target`` (its qualified name).
Prints the counts per package and per source and a sha256 over all output files, which is the same on every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab.train.calls import pairs_from_tests  # noqa: E402
from lab.train.pairs import SOURCES, Pair, docstring_pairs, parse_repo, select  # noqa: E402
from lab.train.sections import section_pairs  # noqa: E402
from sift.eval.format import EvalQuestion  # noqa: E402
from sift.ingest.parsers import ParserRegistry  # noqa: E402
from tests.sources import CACHE, fetch_npm, fetch_sdist  # noqa: E402

PACKAGES = Path(__file__).with_name("packages.json")
EXTRA_KEYS = ("source", "target_kind", "target")
# What a newcomer's question about each target is: where something is implemented, or what the docs say.
KIND_OF_SOURCE = {"doc_section": "doc"}


def load_packages(path: Path = PACKAGES) -> list[dict[str, str]]:
    """The pinned packages, sorted by name."""
    return sorted(json.loads(path.read_text(encoding="utf-8")), key=lambda p: p["name"])


def fetch(package: dict[str, str]) -> Path:
    """The unpacked source root of a pinned package (downloaded and checked against its sha256 once)."""
    if package["registry"] == "npm":
        return fetch_npm(package["name"], package["version"], package["sha256"])
    return fetch_sdist(package["name"], package["version"], package["sha256"])


def generate(
    root: Path, kb: str, cap: int | None = None, registry: ParserRegistry | None = None
) -> list[Pair]:
    """All selected pairs of the repository at ``root``: parse, generate every source, filter and cap."""
    files = parse_repo(root, registry)
    found: list[Pair] = []
    for f in files:
        found.extend(docstring_pairs(f))
        found.extend(section_pairs(f))
    found.extend(pairs_from_tests(files))
    return select(found, kb) if cap is None else select(found, kb, cap)


def to_records(kb: str, pairs: Iterable[Pair]) -> list[dict[str, Any]]:
    """Pairs as eval questions (plus the extra keys), numbered per source: ``train-<kb>-<source>-0001``."""
    numbers: Counter[str] = Counter()
    out = []
    for p in pairs:
        numbers[p.source] += 1
        span = {"path": p.path, "start_line": p.start_line, "end_line": p.end_line}
        out.append(
            {
                "id": f"train-{kb}-{p.source.replace('_', '-')}-{numbers[p.source]:04d}",
                "query": p.query,
                "gold_files": [p.path],
                "gold_spans": [span],
                "kind": KIND_OF_SOURCE.get(p.source, "locate"),
                "kb": kb,
                "source": p.source,
                "target_kind": p.target_kind,
                "target": p.target,
            }
        )
    return out


def dump(records: Iterable[dict[str, Any]]) -> bytes:
    """JSON Lines bytes of ``records`` (UTF-8, keys in the order given)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def load_train(path: Path) -> list[tuple[EvalQuestion, dict[str, str]]]:
    """A train file's questions, each with its extra keys (which the eval loader does not know) apart."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        extra = {k: raw.pop(k) for k in EXTRA_KEYS}
        out.append((EvalQuestion.model_validate(raw), extra))
    return out


def main(argv: list[str] | None = None) -> int:
    """Fetch, parse, pair and write every pinned package; print counts and the output hash."""
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", nargs="*", help="package names to generate (default: all pinned)")
    parser.add_argument("--out", type=Path, default=CACHE / "train", help="output directory")
    parser.add_argument("--cap", type=int, default=None, help="pairs per package and source (default 200)")
    args = parser.parse_args(argv)
    packages = [p for p in load_packages() if not args.only or p["name"] in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    registry = ParserRegistry()
    digest = hashlib.sha256()
    totals: Counter[str] = Counter()
    started = time.perf_counter()
    print(f"{'package':<24}" + "".join(f"{s:>12}" for s in SOURCES) + f"{'total':>8}")
    for package in packages:
        kb = package["name"]
        data = dump(to_records(kb, generate(fetch(package), kb, args.cap, registry)))
        (args.out / f"{kb}.jsonl").write_bytes(data)
        digest.update(data)
        counts = Counter(json.loads(line)["source"] for line in data.decode("utf-8").splitlines())
        totals.update(counts)
        label = f"{kb}-{package['version']}"
        print(f"{label:<24}" + "".join(f"{counts[s]:>12}" for s in SOURCES) + f"{sum(counts.values()):>8}")
    print(f"{'total':<24}" + "".join(f"{totals[s]:>12}" for s in SOURCES) + f"{sum(totals.values()):>8}")
    print(f"{len(packages)} packages, {sum(totals.values())} queries in {time.perf_counter() - started:.1f}s")
    print(f"sha256 {digest.hexdigest()}  ({args.out})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
