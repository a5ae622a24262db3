"""Prompts sized to the model's context: a cheap, conservative token estimate, and the evidence cut to fit.

``SIFT_LLM_CONTEXT_TOKENS`` (printed by ``sift llm serve``) is the whole window; a reply of up to
``SIFT_LLM_MAX_TOKENS`` must fit in it beside the prompt. The evidence is cut by rank (``[1]`` first), whole
items only, so a citation label never loses its text and the model never sees half an item; each item's text is
shortened at a line end to a share of the room, as it always was to ``ITEM_CHARS``.

``estimate_tokens`` counts pieces of text as a byte-level BPE splits them: a lower-case word or capitalised word
is one token per six letters, a long run of capitals one per two (identifiers, base64), a digit one, a symbol
one, a non-ASCII character one per UTF-8 byte. Over 774 excerpts of 1,500 characters from 40 cached packages'
code and docs it was at least SmolLM2's ``/tokenize`` count on 99% (median 1.5 times it); the misses were a
base64 blob. ``tests/e2e/test_llm_real.py`` checks it against the served model's tokenizer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sift.config import Settings
from sift.graph.models import Evidence

_PIECE = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?![a-z])|[0-9]|\s+|[\x21-\x7e]|[^\x00-\x7f]")
ITEM_CHARS = 1500  # the most of one evidence item's text a model is shown
MESSAGE_TOKENS = 8  # what a chat template adds around one message
RESERVE_TOKENS = 64  # the template's own text, and a margin for the estimate


def estimate_tokens(text: str) -> int:
    """A conservative estimate of how many tokens a byte-level BPE tokenizer makes of ``text``."""
    n = 0
    for m in _PIECE.finditer(text):
        piece = m.group()
        c = piece[0]
        if c.isascii() and c.isalpha():
            n += (len(piece) + 1) // 2 if piece.isupper() and len(piece) > 3 else 1 + len(piece) // 6
        elif c.isspace():
            n += 2 if len(piece) > 4 and "\n" in piece else 1
        elif not c.isascii():
            n += len(piece.encode())
        else:
            n += 1
    return n


def messages_tokens(texts: Sequence[str]) -> int:
    """The estimated prompt tokens of messages with these contents."""
    return sum(estimate_tokens(t) + MESSAGE_TOKENS for t in texts)


def prompt_room(settings: Settings) -> int | None:
    """Tokens a prompt may take: the context less the reply's ``max_tokens`` and a reserve; None when the
    context is not configured (prompts are then not cut)."""
    if settings.llm_context_tokens is None:
        return None
    return max(0, settings.llm_context_tokens - settings.llm_max_tokens - RESERVE_TOKENS)


def item_text(e: Evidence, tokens: int | None = None) -> str:
    """``e`` as the model sees it: its label, kind and name, then its text cut at a line end to ``ITEM_CHARS``
    and, with ``tokens``, to the lines that fit in that many (the first line always)."""
    text = e.text
    if len(text) > ITEM_CHARS:
        cut = text.rfind("\n", 0, ITEM_CHARS)
        text = text[: cut if cut > 0 else ITEM_CHARS]
    head = f"{e.label()} {e.kind} {e.name}\n"
    if tokens is None:
        return head + text
    lines = text.split("\n")
    used = estimate_tokens(head)
    kept: list[str] = []
    for line in lines:
        used += estimate_tokens(line) + 1
        if kept and used > tokens:
            break
        kept.append(line)
    return head + "\n".join(kept)


def evidence_block(evidence: Sequence[Evidence], room: int | None = None) -> str:
    """The evidence as the model sees it, in rank order; with ``room`` (tokens), the leading whole items that
    fit in it, each shortened to a fair share of it (a quarter, or more when there are fewer items)."""
    items = sorted(evidence, key=lambda e: e.id)
    if room is None:
        return "\n\n".join(item_text(e) for e in items)
    share = room // max(1, min(len(items), 4))  # so a long first item cannot crowd out the next ones
    shown: list[str] = []
    used = 0
    for e in items:
        block = item_text(e, share)
        cost = estimate_tokens(block) + 1
        if used + cost > room:
            break
        shown.append(block)
        used += cost
    return "\n\n".join(shown)


def shown_ids(block: str) -> list[int]:
    """The evidence numbers an evidence block shows (each item's label opens a line)."""
    return [int(n) for n in re.findall(r"^\[(\d+)\] ", block, flags=re.MULTILINE)]
