"""Inverse-cloze train corpora: a train package with its mined query sentences blanked out of their targets.

A mined query (a docstring's or a section's first sentence) is copied word for word from its own target. On the
package as published, keyword search finds nearly every target by that sentence, so a ranker fitted there learns
to trust keyword overlap far more than a newcomer's question deserves: a newcomer rarely uses the author's words.
The Inverse Cloze Task (Lee, Chang & Toutanova, "Latent Retrieval for Weakly Supervised Open Domain Question
Answering", ACL 2019) takes the query sentence out of its context. Here each package is copied with every such
pair's sentence overwritten by spaces inside its gold span. Only its word characters are overwritten: lines and
columns are unchanged, so the gold spans stay true, and comment markers and quotes stay, so the copy parses as
the original does. A target must then be found by what else it says (its name, its code, the rest of its
documentation), as a real question's target must.

Pairs whose sentence is not in the source as written (``test_name``: a test's name, ``test_doc``: a docstring in
another file) are kept as they are. A pair whose sentence cannot be found in its span is left out.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

CLOZE_SOURCES = frozenset({"docstring", "jsdoc", "module_doc", "doc_section"})
# A doc comment sits above its definition's first line (JSDoc, ``///``): looked for this many lines up.
COMMENT_LINES_ABOVE = 60
# Masked name words, stripped markup and link targets may sit between two words of a query in the source.
MAX_GAP = 8
_WORD = re.compile(r"\w+")


def locate(text: str, query: str, max_gap: int = MAX_GAP, last: bool = False) -> tuple[int, int] | None:
    """The character range in ``text`` of the first (``last``: the last) run of words that holds every word of
    ``query`` in order (compared case-insensitively), with at most ``max_gap`` other words between two of them;
    None if none does."""
    want = [w.lower() for w in _WORD.findall(query)]
    if not want:
        return None
    words = [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]
    order = range(len(words) - 1, -1, -1) if last else range(len(words))
    for i in order:
        word, start, _ = words[i]
        if word != want[0]:
            continue
        at, end = i, words[i][2]
        for w in want[1:]:
            nxt = next((j for j in range(at + 1, min(len(words), at + 2 + max_gap)) if words[j][0] == w), None)
            if nxt is None:
                break
            at, end = nxt, words[nxt][2]
        else:
            return start, end
    return None


def blank(text: str, start: int, end: int) -> str:
    """``text`` with the word characters of ``[start, end)`` overwritten by spaces: line breaks, comment markers,
    quotes and punctuation stay, so every line keeps its number and the file parses as before."""
    return text[:start] + re.sub(r"\w", " ", text[start:end]) + text[end:]


def cloze_questions(files: dict[str, str], questions: Sequence[dict]) -> tuple[dict[str, str], list[dict]]:
    """The files with each clozeable question's sentence blanked inside its gold span, and the questions kept.

    ``files`` maps a path to its text; only the files that change are returned.
    """
    changed: dict[str, str] = {}
    kept: list[dict] = []
    for q in questions:
        if q["source"] not in CLOZE_SOURCES:
            kept.append(q)
            continue
        span = q["gold_spans"][0]
        text = changed.get(span["path"], files.get(span["path"]))
        if text is None:
            continue
        lines = text.split("\n")
        first = span["start_line"]
        if q["source"] == "jsdoc":  # the comment above the definition, the nearest one that holds the sentence
            first = max(1, first - COMMENT_LINES_ABOVE)
        head = sum(len(line) + 1 for line in lines[: first - 1])
        body = "\n".join(lines[first - 1 : span["end_line"] if q["source"] != "jsdoc" else span["start_line"]])
        found = locate(body, q["query"], last=q["source"] == "jsdoc")
        if found is None:
            continue
        changed[span["path"]] = blank(text, head + found[0], head + found[1])
        kept.append(q)
    return changed, kept


def cloze_copy(root: Path, questions: Sequence[dict], dest: Path, kb: str) -> list[dict]:
    """Copy the package at ``root`` to ``dest`` (once) with the questions' sentences blanked; returns the kept
    questions, pointed at knowledge base ``kb``."""
    paths = sorted({q["gold_spans"][0]["path"] for q in questions if q["source"] in CLOZE_SOURCES})
    files = {}
    for p in paths:
        try:
            files[p] = (root / p).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # its questions are left out
    changed, kept = cloze_questions(files, questions)
    done = dest.with_name(dest.name + ".complete")  # beside the copy, so the walk never indexes it
    if not done.exists():
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(root, dest, symlinks=True)
        for path, text in changed.items():
            (dest / path).write_text(text, encoding="utf-8")
        done.write_text("")
    return [{**q, "kb": kb} for q in kept]
