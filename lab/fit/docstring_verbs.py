"""Derive the verbs that open docstring summaries from the train packages and write them to
``sift/fitted/docstring_verbs.json``.

    python lab/fit/docstring_verbs.py            # parse the train packages, write the file
    python lab/fit/docstring_verbs.py --check    # fail unless the committed file comes out equal

The answerer turns a docstring summary into what follows a definition's name ("Return the delay." → "`f`
returns the delay"), which is only safe when the summary's first word is a verb. Which words are is read from the
summaries the train packages' authors wrote (``lab/train/packages.json``, never a dev or test project): every
definition's docstring (a JS/TS doc comment) outside test code and type stubs, parsed with sift's own parsers,
first sentence as ``lab/train/text.docstring_summary`` takes it. A word ``v`` is a docstring verb when:

- ``v`` and its third person ``third_person(v)`` ("return"/"returns", "apply"/"applies") are both words of the
  summaries, anywhere (nouns such as "True" or "Given" have no such form);
- summaries open with either form at least ``MIN_OPENINGS`` times, in at least ``MIN_PACKAGES`` packages (one
  project's habit is not English);
- at least ``MIN_OBJECT_SHARE`` of those openings go on with a word that starts an object or a particle
  (``OBJECT_WORDS``: "Return *the*…", "Check *if*…", "Iterate *over*…"): a noun opening goes on otherwise
  ("Helper *function*…", "Base *class*…", "List *of*…").

Deterministic: packages in name order, the file written with sorted keys, so a run reproduces the committed
file byte for byte. The sources are read from the test cache (``tests/sources.py``; ``SIFT_TEST_CACHE``),
downloaded and checked against their sha256 once when missing.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lab.fit import data_file  # noqa: E402
from lab.train.make_pairs import fetch  # noqa: E402
from lab.train.pairs import CODE_KINDS, is_stub, is_test, parse_repo  # noqa: E402
from lab.train.text import docstring_summary  # noqa: E402
from sift import fitted  # noqa: E402
from sift.graph.writer.docstrings import OBJECT_WORDS, third_person  # noqa: E402
from sift.models import SourceType  # noqa: E402

MIN_OPENINGS = 3
MIN_PACKAGES = 2
MIN_OBJECT_SHARE = 0.2
_OPENING = re.compile(r"([A-Z][a-z]+)\b[\s,]*([^\s,.;:]*)")
_WORDS = re.compile(r"[A-Za-z]+")


def summaries(packages: list[dict[str, str]]) -> list[tuple[str, str]]:
    """(package, summary) for every documented definition of the packages, in package and file order."""
    out: list[tuple[str, str]] = []
    for package in packages:
        for f in parse_repo(fetch(package)):
            if f.tree.source_type != SourceType.CODE or is_test(f.path) or is_stub(f.path):
                continue
            out.extend((package["name"], docstring_summary(n.docstring)) for n in f.tree.nodes
                       if n.docstring and n.kind in CODE_KINDS)
        print(f"{package['name']}: {len(out)} summaries so far", file=sys.stderr)
    return out


def _bases(word: str) -> list[str]:
    """The words whose third person is ``word`` ("matches" → "match"; "uses" → "use", "us"), and ``word``."""
    found = [b for b in (word[:-1], word[:-2], word[:-3] + "y") if len(b) > 1 and third_person(b) == word]
    return [*found, word]


def derive(rows: list[tuple[str, str]]) -> dict[str, list]:
    """The docstring verbs of ``rows``: ``{verb: [third person, openings, packages]}``, sorted by verb."""
    vocabulary: set[str] = set()
    opens: Counter[str] = Counter()
    objects: Counter[str] = Counter()
    packages: defaultdict[str, set[str]] = defaultdict(set)
    for package, text in rows:
        vocabulary.update(w.lower() for w in _WORDS.findall(text))
        m = _OPENING.match(text)
        if not m:
            continue
        word = m.group(1).lower()
        opens[word] += 1
        packages[word].add(package)
        if m.group(2).lower() in OBJECT_WORDS:
            objects[word] += 1
    verbs: dict[str, list] = {}
    for base in sorted({b for w in opens for b in _bases(w)}):
        third = third_person(base)
        n = opens[base] + opens[third]
        if base not in vocabulary or third not in vocabulary or n < MIN_OPENINGS:
            continue
        where = packages[base] | packages[third]
        if len(where) >= MIN_PACKAGES and (objects[base] + objects[third]) / n >= MIN_OBJECT_SHARE:
            verbs[base] = [third, n, len(where)]
    return verbs


def render(verbs: dict[str, list], packages: list[dict[str, str]]) -> str:
    """The data file's text: the rule's thresholds, where the summaries came from, one verb a line."""
    settings = {"min_openings": MIN_OPENINGS, "min_packages": MIN_PACKAGES, "min_object_share": MIN_OBJECT_SHARE}
    return data_file.render("lab/fit/docstring_verbs.py", len(packages), settings, "verbs", verbs)


def main() -> int:
    """Derive the verbs and write the file, or compare with the committed one (``--check``)."""
    return data_file.main(__doc__ or "", data_file.FITTED / fitted.DOCSTRING_VERBS, "verbs",
                          lambda packages: render(derive(summaries(packages)), packages))


if __name__ == "__main__":
    sys.exit(main())
