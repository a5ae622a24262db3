"""Table-driven tests of the code-aware BM25 tokenizer."""

from __future__ import annotations

import time

import pytest

from sift.tokenize import stem, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "AuthService.validateToken",
            ["authservice", "auth", "service", "validatetoken", "validate", "token"],
        ),
        ("HTTPServer2", ["httpserver2", "http", "server", "2"]),
        ("validate_token", ["validatetoken", "validate", "token"]),
        ("auth_service AuthService", ["authservice", "auth", "service", "authservice", "auth", "service"]),
        ("parseJSONString", ["parsejsonstring", "parse", "json", "string"]),
        ("IOError getHTTP", ["ioerror", "io", "error", "gethttp", "get", "http"]),
        ("__init__", ["init"]),
        ("_x", ["x"]),
        ("MAX_FILE_BYTES", ["maxfilebytes", "max", "file", "byte"]),
        ("utf8 sha256", ["utf8", "utf", "8", "sha256", "sha", "256"]),
        ("25.3.0", ["25", "3", "0"]),
        ("café_bar", ["cafébar", "café", "bar"]),
        # prose: stopwords dropped, words stemmed
        ("The tokens are validated by the service", ["token", "validate", "service"]),
        ("How do I parse queries?", ["parse", "query"]),
        # code keywords are kept, duplicates kept for term frequency
        ("return self.token if self.token else None", ["return", "self", "token", "self", "token", "none"]),
        # whole compound identifiers are never dropped, stopword parts are
        ("is_valid get_the_value", ["isvalid", "valid", "getthevalue", "get", "value"]),
        ("sentence-transformers", ["sentence", "transformer"]),
        ("", []),
        ("  ... --- !!! ", []),
        ("the of and", []),
    ],
)
def test_tokenize_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("tokens", "token"),
        ("queries", "query"),
        ("classes", "class"),
        ("matches", "match"),
        ("validated", "validate"),
        ("validating", "validate"),
        ("embedding", "embed"),
        ("embedded", "embed"),
        ("embed", "embed"),
        ("parsing", "parse"),
        ("parses", "parse"),
        ("resolving", "resolve"),
        ("running", "run"),
        ("added", "add"),
        ("opened", "open"),
        ("returned", "return"),
        ("caching", "cache"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("class", "class"),
        ("string", "string"),
        ("service", "service"),
        ("need", "need"),
        ("agreed", "agree"),
        ("apply", "apply"),
        ("its", "its"),
    ],
)
def test_stem_words(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_tokenize_order_of_appearance() -> None:
    assert tokenize("beta alpha beta") == ["beta", "alpha", "beta"]


def test_tokenize_is_fast() -> None:
    text = (
        "def validate_token(self, token: str) -> bool:\n"
        '    """Return True when the token matches the secret."""\n'
        "    return hmac.compare_digest(token, self.secret)\n"
    ) * 20
    start = time.perf_counter()
    for _ in range(200):
        tokenize(text)
    per_chunk_ms = (time.perf_counter() - start) / 200 * 1000
    assert per_chunk_ms < 5, per_chunk_ms


def test_prefix_variants_strip_one_derivational_prefix() -> None:
    from sift.tokenize import prefix_variants

    assert "comput" in prefix_variants("recomput")
    assert "expect" in prefix_variants("unexpect")
    assert prefix_variants("read") == ()  # the rest would be a fragment, not a word
