"""Columns of what a pooled candidate is, for ``ranker_extra.py``: pure functions of the candidates' spans and texts.

Each takes one question's candidates, ``spans`` as ``(path, start, end, kind)`` and ``texts`` as ``(name, symbol,
text)`` in the same order, and gives one value per candidate:

- ``documented``: a definition whose first lines hold a docstring or a doc comment, as public API usually does;
- ``path_depth``: how many directories deep its file is (a package's plumbing tends to sit deeper than its entry
  points and its README);
- ``js_exported``: a JavaScript or TypeScript definition whose file exports its name (an export declaration or
  list, ``module.exports``, ``exports.name``): what the package offers rather than a helper of its own;
- ``symbol_files``: how many other files among the candidates define the same name;
- ``agreement``: whether the first candidates name, call or are called by one another;
- ``channel_first``: a channel ranked it within its first few (from the ranker's ``rr_*`` column);
- ``near_top``: it lies just before or after one of the first candidates in the same file;
- ``top_margin``: how clear a channel's first candidate stands (one value per question);
- ``shows_example``: a documentation section with a code example.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from sift.retrievers.ranker import RRF_K

Spans = Sequence[tuple[str, int, int, str]]
Texts = Sequence[tuple[str, str, str]]
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx")
HEAD_LINES = 6  # where a definition's docstring or doc comment begins
_DOC_OPENINGS = ('"""', "'''", "/**")
_JS_NAME = re.compile(r"[A-Za-z_$][\w$]*")
TOP = 10  # "the first candidates" of the agreement columns: by RRF over every channel


def documented(spans: Spans, texts: Texts) -> np.ndarray:
    """1 for a definition with a docstring or doc comment in its first ``HEAD_LINES`` lines, else 0."""
    out = []
    for (_, _, _, kind), (_, _, text) in zip(spans, texts, strict=True):
        head = "\n".join(text.splitlines()[:HEAD_LINES])
        out.append(float(kind != "doc" and any(o in head for o in _DOC_OPENINGS)))
    return np.array(out, dtype=np.float64)


def path_depth(spans: Spans) -> np.ndarray:
    """How many directories deep each candidate's file is (0 at the project's root)."""
    return np.array([path.count("/") for path, _, _, _ in spans], dtype=np.float64)


def exports(source: str, name: str) -> bool:
    """Whether a JavaScript or TypeScript file's ``source`` exports ``name``."""
    n = rf"(?<![\w$]){re.escape(name)}(?![\w$])"  # a JS name may hold "$", where \b sees no boundary
    declared = r"(?:function\*?|class|const|let|var|interface|type|enum|namespace)"
    pattern = (rf"export\s+(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?{declared}\s+{n}"
               rf"|export\s+default\s+{n}|export\s*\{{[^}}]*{n}"
               rf"|module\.exports\s*=\s*{n}|module\.exports\s*=\s*\{{[^}}]*{n}|exports\.{n}\s*=")
    return re.search(pattern, source) is not None


def js_exported(spans: Spans, texts: Texts, file_text: Callable[[str], str]) -> np.ndarray:
    """1 for a JavaScript or TypeScript definition whose file (``file_text(path)``) exports the first part of its
    symbol; 0 for it otherwise and for every other candidate."""
    out = []
    for (path, _, _, kind), (name, symbol, _) in zip(spans, texts, strict=True):
        first = (symbol or name).replace("#", ".").split(".")[0]
        js = kind != "doc" and path.endswith(JS_SUFFIXES) and _JS_NAME.fullmatch(first) is not None
        out.append(float(js and exports(file_text(path), first)))
    return np.array(out, dtype=np.float64)


def js_code(spans: Spans) -> np.ndarray:
    """1 for a JavaScript or TypeScript definition."""
    return np.array([kind != "doc" and path.endswith(JS_SUFFIXES) for path, _, _, kind in spans], dtype=np.float64)


def symbol_files(spans: Spans, texts: Texts) -> np.ndarray:
    """log(1 + how many other files among the candidates hold a definition of the same name): the same function
    in every locale or plugin file is that family's plumbing, not the one place a question is about."""
    names = [symbol.rsplit(".", 1)[-1] if kind != "doc" else "" for (_, symbol, _), (_, _, _, kind)
             in zip(texts, spans, strict=True)]
    files: defaultdict[str, set[str]] = defaultdict(set)
    for name, (path, _, _, _) in zip(names, spans, strict=True):
        if name:
            files[name].add(path)
    return np.array([np.log1p(len(files[n]) - 1) if n else 0.0 for n in names], dtype=np.float64)


def _short_name(name: str, symbol: str) -> str:
    """A definition's own name when it is distinctive enough to look for in text (four characters or more)."""
    last = (symbol or name).replace("#", ".").rsplit(".", 1)[-1]
    return last if len(last) >= 4 and re.fullmatch(r"\w+", last) else ""


def agreement(spans: Spans, texts: Texts, rrf: np.ndarray) -> dict[str, np.ndarray]:
    """The pool-agreement columns of one question (``rrf``: each candidate's log RRF): how many of the first
    ``TOP`` candidates' definitions a section names (log1p), whether a first section names a definition, whether a
    definition calls (log1p of how many) or is called by another first definition."""
    kinds = [k for _, _, _, k in spans]
    names = [_short_name(name, symbol) for name, symbol, _ in texts]
    top = np.argsort(-rrf, kind="stable")[:TOP].tolist()
    top_code = {names[i] for i in top if kinds[i] != "doc" and names[i]}
    top_doc_words = {w for i in top if kinds[i] == "doc" for w in re.findall(r"\w+", texts[i][2])}
    n = len(spans)
    out = {k: np.zeros(n) for k in ("doc_names_top_code", "code_named_by_top_doc", "calls_top_code",
                                     "called_by_top_code")}
    for i, (_, _, text) in enumerate(texts):
        if kinds[i] == "doc":
            out["doc_names_top_code"][i] = np.log1p(len(top_code & set(re.findall(r"\w+", text))))
            continue
        calls = {m for m in top_code if m != names[i] and re.search(rf"\b{re.escape(m)}\s*\(", text)}
        out["calls_top_code"][i] = np.log1p(len(calls))
        if names[i]:
            out["code_named_by_top_doc"][i] = float(names[i] in top_doc_words)
            call = re.compile(rf"\b{re.escape(names[i])}\s*\(")
            out["called_by_top_code"][i] = float(any(call.search(texts[j][2]) for j in top
                                                     if j != i and kinds[j] != "doc"))
    return out


def channel_first(rr: np.ndarray, top: int = 1) -> np.ndarray:
    """1 where a channel ranked the candidate within its first ``top``, from its ``rr_*`` column
    (``RRF_K / (RRF_K + rank)``, 0 when the channel did not retrieve it): the column is nearly flat over the first
    ranks (0.984 at rank 1, 0.952 at rank 3), so a channel's own first place has no weight of its own."""
    return (rr >= RRF_K / (RRF_K + top) - 1e-12).astype(np.float64)


def near_top(spans: Spans, order: np.ndarray, top: int = 3, reach: int = 40) -> np.ndarray:
    """1 for a candidate within ``reach`` lines of one of the ``top`` first candidates by ``order`` in the same file
    (not itself): the next section or definition of a place that ranks, where the answer often goes on."""
    first = [spans[i] for i in np.argsort(-order, kind="stable")[:top]]
    out = np.zeros(len(spans))
    for i, (path, start, end, _) in enumerate(spans):
        out[i] = any(p == path and (s, e) != (start, end) and start <= e + reach and s <= end + reach
                     for p, s, e, _ in first)
    return out


def top_margin(values: np.ndarray) -> float:
    """How far a question's best value stands above its second best (0 with fewer than two): a channel whose first
    candidate stands clear of the rest is more likely right about it."""
    if len(values) < 2:
        return 0.0
    two = np.partition(values, len(values) - 2)[-2:]
    return float(two[1] - two[0])


_EXAMPLE = re.compile(r"^(?:```|~~~|\.\. (?:code-block|code|sourcecode|doctest)::|>>> |\$ )", re.M)


def shows_example(spans: Spans, texts: Texts) -> np.ndarray:
    """1 for a documentation section that shows code (a fenced or reST code block, a doctest, a shell prompt): what
    a "how do I …" question wants to see."""
    return np.array([float(kind == "doc" and bool(_EXAMPLE.search(text)))
                     for (_, _, _, kind), (_, _, text) in zip(spans, texts, strict=True)])
