"""Derive which words are generic in software text from the train packages and write
``sift/fitted/generic_words.json``.

    python lab/fit/generic_words.py            # parse and chunk the train packages, write the file
    python lab/fit/generic_words.py --check    # fail unless the committed file comes out equal

A question word that no chunk of a project contains is, for the writer, a sign that the project does not cover
what is asked ("Kafka", "protobuf", "OAuth"). Many such words are only the asker's phrasing ("suppose",
"figure", "notice", "therefore"): common English that a small project happens never to write. What tells them
apart is how a word spreads over many projects' text (``lab/train/packages.json``, never a dev or test
project; every file the ingest would index, chunked as the ingest chunks it, each chunk a document):

- ``entropy``: the normalised entropy of the word's occurrences over the packages (0 when one package has them
  all, 1 when every package has an equal share). A topic of some kinds of project ("kafka", "protobuf") has little;
- ``ridf``: residual idf (Church and Gale, 1995), the word's idf less the idf a Poisson spread of its
  occurrences over the chunks would give: ``log2(N / df) + log2(1 - exp(-cf / N))``. A content word comes in
  bursts (high), a word of the prose around content is spread thinly (near 0).

The file lists every word with ``entropy >= MIN_ENTROPY`` and ``ridf <= MAX_RIDF`` (the widest of the cut-offs
``lab/fit/abstention.py`` chooses from, ``sift.graph.writer.terms.GENERIC_CUTS``) with its two measures, rounded.
Deterministic: packages in name order, words sorted, so a run reproduces the committed file byte for byte. The
sources are read from the test cache (``tests/sources.py``; ``SIFT_TEST_CACHE``), downloaded and checked against
their sha256 once when missing.
"""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab.fit import data_file  # noqa: E402
from lab.train.make_pairs import fetch  # noqa: E402
from lab.train.pairs import parse_repo  # noqa: E402
from sift import fitted  # noqa: E402
from sift.graph.writer.terms import GENERIC_CUTS  # noqa: E402
from sift.ingest.chunk import chunk_tree  # noqa: E402
from sift.tokenize import tokenize  # noqa: E402

MIN_ENTROPY = min(e for e, _ in GENERIC_CUTS)
MAX_RIDF = max(r for _, r in GENERIC_CUTS)
DIGITS = 3


def counts(packages: list[dict[str, str]]) -> tuple[int, Counter[str], Counter[str], dict[str, Counter[str]]]:
    """The number of chunks, and per word: the chunks that contain it, its occurrences, and its occurrences per
    package. A chunk repeated at the same lines of one file counts once."""
    n = 0
    df: Counter[str] = Counter()
    cf: Counter[str] = Counter()
    by_package: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for package in packages:
        for f in parse_repo(fetch(package)):
            seen: set[tuple[int, int]] = set()
            for chunk in chunk_tree(f.tree, f.lines):
                if (chunk.start_line, chunk.end_line) in seen:
                    continue
                seen.add((chunk.start_line, chunk.end_line))
                n += 1
                words = Counter(tokenize(chunk.text))
                df.update(words.keys())
                cf.update(words)
                for word, k in words.items():
                    by_package[word][package["name"]] += k
        print(f"{package['name']}: {n} chunks so far", file=sys.stderr)
    return n, df, cf, by_package


def measures(n: int, df: int, cf: int, per_package: list[int], packages: int) -> tuple[float, float]:
    """A word's (entropy over the packages, residual idf over the chunks)."""
    total = sum(per_package)
    entropy = -sum(k / total * math.log(k / total) for k in per_package) / math.log(packages)
    ridf = math.log2(n / df) + math.log2(-math.expm1(-cf / n))
    return entropy, ridf


def derive(packages: list[dict[str, str]]) -> dict[str, list[float]]:
    """``{word: [entropy, ridf]}`` of the generic words under the widest cut-off, sorted by word."""
    n, df, cf, by_package = counts(packages)
    out: dict[str, list[float]] = {}
    for word in sorted(df):
        entropy, ridf = measures(n, df[word], cf[word], list(by_package[word].values()), len(packages))
        if entropy >= MIN_ENTROPY and ridf <= MAX_RIDF:
            out[word] = [round(entropy, DIGITS), round(ridf, DIGITS)]
    return out


def render(words: dict[str, list[float]], packages: list[dict[str, str]]) -> str:
    """The data file's text: where the measures came from and the widest cut-off, then one word a line."""
    settings = {"min_entropy": MIN_ENTROPY, "max_ridf": MAX_RIDF, "columns": ["entropy", "ridf"]}
    return data_file.render("lab/fit/generic_words.py", len(packages), settings, "words", words)


def main() -> int:
    """Derive the words and write the file, or compare with the committed one (``--check``)."""
    return data_file.main(__doc__ or "", data_file.FITTED / fitted.GENERIC_WORDS, "words",
                          lambda packages: render(derive(packages), packages))


if __name__ == "__main__":
    sys.exit(main())
