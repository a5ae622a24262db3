"""Time-bounded regexes, result windows and fuzzy heading matching."""

from __future__ import annotations

import time

import pytest

from sift.errors import InvalidQuery
from sift.retrievers.docql.ast import Window
from sift.retrievers.docql.executor import window_bounds
from sift.retrievers.docql.matching import fuzzy_headings, normalize_title
from sift.retrievers.docql.regex import Deadline, compile_regex


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "found"),
    [
        ("token", "", "a Token here", False),
        ("token", "i", "a Token here", True),
        ("^b", "", "a\nb", False),
        ("^b", "m", "a\nb", True),
        ("a.b", "", "a\nb", False),
        ("a.b", "s", "a\nb", True),
    ],
)
def test_regex_flags(pattern: str, flags: str, text: str, found: bool) -> None:
    assert Deadline().search(compile_regex(pattern, flags), text) is found


def test_regex_compile_error_is_invalid_query() -> None:
    with pytest.raises(InvalidQuery) as info:
        compile_regex("(a", "", query="$.content.grep('(a')", position=16)
    assert info.value.position == 16
    assert "invalid regex /(a/" in info.value.message


def test_regex_catastrophic_backtracking_is_bounded() -> None:
    started = time.monotonic()
    with pytest.raises(InvalidQuery) as info:
        Deadline(0.2, position=7).search(compile_regex("(a|aa)+$", ""), "a" * 64 + "!")
    assert time.monotonic() - started < 1.5
    assert info.value.position == 7
    assert "took too long" in info.value.message


@pytest.mark.parametrize(
    ("window", "n", "bounds"),
    [
        (None, 5, (0, 5)),
        (None, 0, (0, 0)),
        (Window(0, None, True, 1), 5, (0, 1)),
        (Window(4, None, True, 1), 5, (4, 5)),
        (Window(5, None, True, 1), 5, (0, 0)),
        (Window(-1, None, True, 1), 5, (4, 5)),
        (Window(-6, None, True, 1), 5, (0, 0)),
        (Window(1, 3, False, 1), 5, (1, 3)),
        (Window(None, 2, False, 1), 5, (0, 2)),
        (Window(3, None, False, 1), 5, (3, 5)),
        (Window(-2, None, False, 1), 5, (3, 5)),
        (Window(2, 99, False, 1), 5, (2, 5)),
        (Window(4, -3, False, 1), 5, (4, 4)),
        (Window(0, 3, False, 1), 0, (0, 0)),
    ],
)
def test_window_bounds(window: Window | None, n: int, bounds: tuple[int, int]) -> None:
    assert window_bounds(window, n) == bounds


@pytest.mark.parametrize(
    ("title", "normalized"),
    [
        ("Authentication", "authentication"),
        ("  Auth-Service: Setup!", "auth service setup"),
        ("validate_token()", "validate token"),
        ("Über Café", "über café"),
        ("", ""),
    ],
)
def test_normalize_title(title: str, normalized: str) -> None:
    assert normalize_title(title) == normalized


@pytest.mark.parametrize(
    ("titles", "wanted", "expected"),
    [
        (["Authentication", "Authentication flow", "Auth"], "authentication", ["Authentication"]),
        (
            ["Authentication flow", "Token authentication!"],
            "AUTHENTICATION",
            ["Authentication flow", "Token authentication!"],
        ),
        (["Reauthentication", "Setup"], "authentication", ["Reauthentication"]),
        (["Setup", "Install"], "authentication", []),
        (
            ["Rotating secrets", "Rotating  Secrets."],
            "rotating-secrets",
            ["Rotating secrets", "Rotating  Secrets."],
        ),
        ([], "x", []),
    ],
)
def test_fuzzy_headings_prefers_exact_titles(titles: list[str], wanted: str, expected: list[str]) -> None:
    rows = [{"name": t} for t in titles]
    assert [r["name"] for r in fuzzy_headings(rows, wanted)] == expected
