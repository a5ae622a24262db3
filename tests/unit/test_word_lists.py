"""No product word list holds a phrase of an eval question.

The rules that read a question (its form, whether it asks for a list, whether it asks yes or no) and the writer's
other word lists are lists of words and phrases. A phrase copied from an eval question makes the dev figures
measure that question rather than how sift reads a newcomer's; the lists must hold general English forms. So every
phrase of two or more words that a list holds is looked for, word for word, in the text of every eval question of
every set (the question sets are only read here, to check, as ``test_eval_leak.py`` reads them).

A list is what the product code spells out: a tuple, list, set or dict of strings anywhere in a module, the phrases a
regular expression matches literally (its alternatives expanded, a repetition or a class of characters ending a
phrase), and the JSON word lists shipped as package data. A phrase made of English function words only
(``sift.tokenize.STOPWORDS``: "how do i", "is there", "what are the") is grammar every question shares, not
wording taken from one, and is not counted.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sift.tokenize import STOPWORDS

try:
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # Python < 3.11
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[2]
# The packages whose code reads a question's wording: the core, the retrievers and the graph (with its writer).
READERS = ("sift", "retrievers", "graph")
# Words of the languages and formats sift reads, which its parsers of code and documents spell out as written:
# their syntax, not a question's wording.
SYNTAX = {"async def", "async function", "code block"}
_WORDS = re.compile(r"[a-z0-9_']+")  # an identifier (``log_lines``) is one word
_RE_FUNCS = {"compile", "search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def _modules() -> list[Path]:
    return [p for top in READERS for p in sorted((ROOT / top).rglob("*.py")) if "__pycache__" not in p.parts]


def _word_list_files() -> list[Path]:
    """The JSON word lists shipped as package data (``*words*.json``, ``*verbs*.json``), wherever they live."""
    found: set[Path] = set()
    for top in READERS:
        for pattern in ("*words*.json", "*verbs*.json"):
            found.update((ROOT / top).rglob(pattern))
    return sorted(found)


# --- regular expressions: the literal phrases they match ---------------------------------------------------------

def _is_space(items: object) -> bool:
    """A class of characters or a category that is whitespace (``\\s``, ``[ ]``)."""
    try:
        seq = list(items)  # type: ignore[call-overload]
    except TypeError:
        return False
    return bool(seq) and all(
        (op is sre_constants.CATEGORY and av is sre_constants.CATEGORY_SPACE)
        or (op is sre_constants.LITERAL and chr(av).isspace())
        or (op is sre_constants.IN and _is_space(av))
        for op, av in seq)


def _runs(pattern: object, out: list[str]) -> None:
    """Append to ``out`` the runs of letters and spaces that ``pattern`` spells out between its groups."""
    run: list[str] = []

    def flush() -> None:
        out.append("".join(run))
        run.clear()

    for op, av in pattern:  # type: ignore[attr-defined]
        if op is sre_constants.LITERAL:
            run.append(chr(av).lower())
        elif op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            continue  # anchors, word boundaries and look-arounds match no letters
        elif op is sre_constants.IN and _is_space([(op, av)]) or op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and _is_space(av[2]):
            run.append(" ")
        else:
            flush()
            if op is sre_constants.SUBPATTERN:
                _runs(av[-1], out)
            elif op is sre_constants.BRANCH:
                for branch in av[1]:
                    _runs(branch, out)
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                _runs(av[2], out)
    flush()


def regex_phrases(source: str, verbose: bool = False) -> set[str]:
    """The phrases that the regular expression ``source`` spells out as written: each run of words between its
    groups and alternatives. A grammar of word classes ("which|what", then "kinds|types", then "of") spells out
    words, not phrases; an alternative written as a phrase ("is there a way") is one."""
    runs: list[str] = []
    _runs(sre_parse.parse(source, re.VERBOSE if verbose else 0), runs)
    return {" ".join(r.split()) for r in runs if r.split()}


def _pattern_text(node: ast.expr) -> str | None:
    """A pattern argument as text: a literal, a concatenation of literals, an f-string (its holes as breaks)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "(?!)" for v in node.values)  # type: ignore[misc]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pattern_text(node.left), _pattern_text(node.right)
        return None if left is None or right is None else left + right
    return None


def _regexes(tree: ast.AST) -> Iterator[tuple[str, bool]]:
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in _RE_FUNCS and node.args):
            continue
        text = _pattern_text(node.args[0])
        if text is None:
            continue
        flags = {a.attr for a in ast.walk(node) if isinstance(a, ast.Attribute)}
        yield text, bool(flags & {"VERBOSE", "X"})


# --- collections of strings -------------------------------------------------------------------------------------

def _strings(tree: ast.AST) -> Iterator[str]:
    """The strings of every tuple, list, set or dict of two or more strings in a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            elts = [k for k in node.keys if k is not None] + list(node.values)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            elts = list(node.elts)
        else:
            continue
        texts = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(texts) >= 2:
            yield from texts


def _json_strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _json_strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_strings(v)


def product_phrases() -> dict[str, set[str]]:
    """Every phrase of two or more words that a product word list holds, with where it is."""
    where: dict[str, set[str]] = {}

    def add(phrase: str, origin: str) -> None:
        words = _WORDS.findall(phrase.lower())
        if len(words) >= 2:
            where.setdefault(" ".join(words), set()).add(origin)

    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for source, verbose in _regexes(tree):
            try:
                phrases = regex_phrases(source, verbose)
            except re.error:
                continue
            for phrase in phrases:
                add(phrase, f"{rel} (regex)")
        for text in _strings(tree):
            add(text, f"{rel} (list)")
    for path in _word_list_files():
        rel = path.relative_to(ROOT).as_posix()
        for text in _json_strings(json.loads(path.read_text(encoding="utf-8"))):
            add(text, rel)
    return where


def eval_questions() -> list[str]:
    """The text of every question of every eval set."""
    out = []
    for path in sorted((ROOT / "eval" / "sets").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.append(str(row.get("query") or row.get("question") or ""))
    return out


def _function_words_only(phrase: str) -> bool:
    return all(w in STOPWORDS for w in phrase.split())


def shared_phrases(phrases: dict[str, set[str]], questions: list[str]) -> dict[str, set[str]]:
    """The phrases (not of function words only) that some question holds word for word, case aside."""
    text = "\n".join(" ".join(_WORDS.findall(q.lower())) for q in questions)
    return {p: origins for p, origins in phrases.items() if p not in SYNTAX and not _function_words_only(p)
            and re.search(rf"(?<![a-z0-9_']){re.escape(p)}(?![a-z0-9_'])", text)}


@pytest.mark.parametrize(("source", "expected"), [
    (r"^\s*(how (do|can) (i|we)|is there a way)\b", {"how", "do", "can", "i", "we", "is there a way"}),
    (r"which\s+(functions?|class(es)?)\b", {"which", "function", "s", "class", "es"}),
    (r"what (\w+\s+){0,3}are supported", {"what", "are supported"}),
    (r"(?:set|passed)[\s!.?]*(there|again)?", {"set", "passed", "there", "again"}),
    (r"(?i)\bcome\s+with\b|out of the box", {"come with", "out of the box"}),
])
def test_regex_phrases(source: str, expected: set[str]) -> None:
    assert regex_phrases(source) == expected


def test_shared_phrases_skip_function_words_and_need_whole_words() -> None:
    phrases = {"how do i": {"a"}, "out of the box": {"b"}, "come with": {"c"}, "are there": {"d"}}
    questions = ["How do I parse it?", "Does it work out of the box?", "What comes with it? Are there more?"]
    assert shared_phrases(phrases, questions) == {"out of the box": {"b"}}


def test_the_lists_are_found() -> None:
    phrases = product_phrases()
    assert _word_list_files(), "no JSON word list found"
    assert any("(regex)" in o for origins in phrases.values() for o in origins)
    assert any("(list)" in o for origins in phrases.values() for o in origins)


def test_no_word_list_holds_a_phrase_of_an_eval_question() -> None:
    questions = eval_questions()
    assert len(questions) > 100
    shared = shared_phrases(product_phrases(), questions)
    assert not shared, "phrases of eval questions in product word lists:\n" + "\n".join(
        f"  {p!r}: {', '.join(sorted(o))}" for p, o in sorted(shared.items()))
