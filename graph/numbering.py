"""Citation numbers as a reader sees them: ``[1]``…``[n]`` in order of first use, no gaps, each once per sentence.

While the graph runs, a marker ``[n]`` is the id of an evidence item (what the checker verifies). The final answer
renumbers markers, citations, the files map and the evidence list together, so ``[k]`` in the text is still the
citation and the evidence item with ``evidence_id``/``id`` k.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from sift.graph.models import MARKER, cited_ids

_REPEATED = re.compile(r"(\[\d+\])(?:[ \t]*\1)+")


def numbering(text: str, cited: Iterable[int], evidence: Iterable[int]) -> dict[int, int]:
    """Old id → new number: the text's markers in order of first use, then other cited ids, then the rest of
    the evidence in its order. A marker that names neither (``[0]`` in quoted code) is not numbered."""
    cited, evidence = list(cited), list(evidence)
    known = {*cited, *evidence}
    order = list(dict.fromkeys([*(n for n in cited_ids(text) if n in known), *cited, *evidence]))
    return {old: new for new, old in enumerate(order, 1)}


def renumber_text(text: str, mapping: Mapping[int, int]) -> str:
    """The text with every known marker renumbered and a marker repeated back to back kept once."""
    def swap(m: re.Match[str]) -> str:
        n = int(m.group(1))
        return f"[{mapping[n]}]" if n in mapping else m.group(0)

    return _REPEATED.sub(r"\1", MARKER.sub(swap, text))
