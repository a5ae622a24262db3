"""Copies of one definition in several files: the manifest's entry points, the preference and the folding."""

from __future__ import annotations

import json

import pytest

from sift.models import Copy, Hit
from sift.retrievers.copies import collapse, entry_paths, is_copy, preference

_BUILDS = json.dumps({
    "name": "pkg", "main": "./lib/cjs/pkg.js", "module": "./lib/esm/pkg.js",
    "exports": {"browser": "./pkg.min.js", "import": "./lib/esm/pkg.js", "require": "./lib/cjs/pkg.js"},
})


@pytest.mark.parametrize(("manifest", "expected"), [
    (_BUILDS, ("lib/cjs/pkg.js", "lib/esm/pkg.js", "pkg.min.js")),
    (json.dumps({"main": "index.js", "types": "index.d.ts"}), ("index.js", "index.d.ts")),
    # nested conditions, in the order written; subpath patterns and paths outside the package are not files
    (json.dumps({"exports": {".": {"types": {"require": "./index.d.cts", "default": "./index.d.ts"},
                                   "default": "./dist/index.js"}, "./features/*": "./dist/features/*.js"}}),
     ("index.d.cts", "index.d.ts", "dist/index.js")),
    (json.dumps({"main": "../elsewhere.js", "module": "/abs.js", "types": "."}), ()),
    (json.dumps({"exports": ["./a.js", {"node": "./b.js"}]}), ("a.js", "b.js")),
    (json.dumps({"main": 3, "module": None}), ()),
    (json.dumps({"main": "..", "module": "./../up.js", "types": "lib/../index.d.ts"}), ("index.d.ts",)),
    ("{not json", ()),
    ('{"main": "a.js", "exports": ' + "[" * 5000 + "]" * 5000 + "}", ()),  # too deep for the JSON reader
    ('{"main": "a.js", "exports": ' + '{"x": ' * 900 + '"./b.js"' + "}" * 900 + "}", ("a.js", "b.js")),  # deep
    ("[1, 2]", ()),
    ("", ()),
])
def test_entry_paths(manifest, expected):
    assert entry_paths(manifest) == expected


@pytest.mark.parametrize(("path", "entries", "expected"), [
    ("lib/cjs/pkg.js", ("lib/cjs/pkg.js", "lib/esm/pkg.js"), (0, 0)),
    ("lib/esm/pkg.js", ("lib/cjs/pkg.js", "lib/esm/pkg.js"), (0, 1)),
    ("lib/cjs/utils.js", ("lib/cjs/pkg.js", "lib/esm/pkg.js"), (1, 0)),  # beside the entry file
    ("lib/esm/utils.js", ("lib/cjs/pkg.js", "lib/esm/pkg.js"), (1, 1)),
    ("pkg.js", ("lib/cjs/pkg.js", "pkg.min.js"), (1, 1)),  # a root file beside a root entry
    ("lib/cjs/sub/deep.js", ("lib/cjs/pkg.js",), (2, 0)),  # only the entry's own folder
    ("pkg.js", (), (2, 0)),
])
def test_preference(path, entries, expected):
    assert preference(path, entries) == expected


def _hit(path: str, symbol: str, rank: int, *, kind: str = "function", module_code: bool = False) -> Hit:
    return Hit(path=path, start_line=rank * 10, end_line=rank * 10 + 5, kind=kind, name=symbol, symbol=symbol,
               module_code=module_code, score=1.0 / rank, chunk_id=rank, node_id=None, channel="fused", rank=rank,
               channels=("bm25",) if rank % 2 else ("vector",))


WORDS = {
    "render": {"function", "render", "template", "data", "return", "compile"},
    "render-esm": {"function", "render", "template", "data", "return", "compile", "export"},  # 6/7 shared
    "other": {"function", "render", "something", "else", "entirely"},
}


def _words(table: dict[int, str]):
    return lambda h: WORDS[table[h.chunk_id]]


@pytest.mark.parametrize(("a", "b", "words_a", "words_b", "copy"), [
    (_hit("a.js", "render", 1), _hit("lib/a.js", "render", 2), WORDS["render"], WORDS["render"], True),
    (_hit("a.js", "render", 1), _hit("lib/a.js", "render", 2), WORDS["render"], WORDS["render-esm"], False),
    (_hit("a.js", "render", 1), _hit("a.js", "render", 2), WORDS["render"], WORDS["render"], False),  # one file
    (_hit("a.js", "render", 1), _hit("b.js", "compile", 2), WORDS["render"], WORDS["render"], False),
    (_hit("a.js", "", 1), _hit("b.js", "", 2), WORDS["render"], WORDS["render"], False),  # no symbol
    (_hit("a.js", "m", 1, module_code=True), _hit("b.js", "m", 2), WORDS["render"], WORDS["render"], False),
    (_hit("a.js", "render", 1), _hit("b.js", "render", 2), set(), set(), False),  # no words at all
])
def test_is_copy(a, b, words_a, words_b, copy):
    assert is_copy(a, b, words_a, words_b) is copy


def test_collapse_shows_the_entry_copy_at_the_best_copys_place():
    hits = [_hit("pkg.js", "render", 1), _hit("lib/cjs/other.js", "parse", 2), _hit("lib/cjs/pkg.js", "render", 3),
            _hit("lib/esm/pkg.js", "render", 4)]
    words = _words({1: "render", 2: "other", 3: "render", 4: "render"})
    out = collapse(hits, words, ("lib/cjs/pkg.js", "lib/esm/pkg.js", "pkg.min.js"))
    assert [(h.path, h.rank) for h in out] == [("lib/cjs/pkg.js", 1), ("lib/cjs/other.js", 2)]
    first = out[0]
    assert first.score == 1.0 and first.start_line == 30  # the first copy's score, the shown copy's own lines
    assert first.copies == (Copy(path="pkg.js", start_line=10, end_line=15),
                            Copy(path="lib/esm/pkg.js", start_line=40, end_line=45))
    assert first.channels == ("bm25", "vector")  # every copy's channels


def test_collapse_without_a_manifest_keeps_the_best_ranked_copy():
    hits = [_hit("b/x.js", "render", 1), _hit("a/x.js", "render", 2)]
    out = collapse(hits, _words({1: "render", 2: "render"}))
    assert [h.path for h in out] == ["b/x.js"] and [c.path for c in out[0].copies] == ["a/x.js"]


@pytest.mark.parametrize(("second", "kind"), [
    ("render-esm", "function"),  # rewritten, not copied: two places
    ("render", "doc"),  # sections are never folded: two documents may share a heading and words
])
def test_collapse_keeps_what_is_not_a_copy(second, kind):
    hits = [_hit("a.js", "render", 1, kind=kind), _hit("b.js", "render", 2, kind=kind)]
    out = collapse(hits, _words({1: "render", 2: second}))
    assert [(h.path, h.copies) for h in out] == [("a.js", ()), ("b.js", ())]


def test_collapse_reads_words_only_for_hits_that_share_a_symbol():
    asked: list[int | None] = []
    hits = [_hit("a.js", "one", 1), _hit("b.js", "two", 2), _hit("c.js", "one", 3)]

    def words(h: Hit) -> set[str]:
        asked.append(h.chunk_id)
        return WORDS["render"]

    out = collapse(hits, words)
    assert sorted(asked) == [1, 3] and [h.path for h in out] == ["a.js", "b.js"]
