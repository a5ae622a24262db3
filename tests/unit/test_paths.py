"""The one classifier of test, release-note, project-meta and stub paths that fusion and the writer share."""

from __future__ import annotations

import pytest

from sift.retrievers.paths import is_changelog_path, is_notes_path, is_stub_path, is_test_path


@pytest.mark.parametrize(
    ("path", "test", "changelog", "notes", "stub"),
    [
        ("src/pkg/fields.py", False, False, False, False),
        ("tests/test_fields.py", True, False, False, False),
        ("pkg/fields_test.go", True, False, False, False),
        ("conftest.py", True, False, False, False),
        ("web/spec/user_spec.rb", True, False, False, False),
        ("web/src/__tests__/app.js", True, False, False, False),
        ("web/src/app.test.js", True, False, False, False),
        ("web/src/app.spec.ts", True, False, False, False),
        ("src/testament.py", False, False, False, False),
        ("CHANGELOG.md", False, True, True, False),
        ("docs/changelog.rst", False, True, True, False),
        ("docs/upgrading.rst", False, True, True, False),
        ("changelog.d/1234.change.md", False, True, True, False),
        ("MIGRATING.md", False, True, True, False),
        ("AUTHORS.rst", False, False, True, False),
        ("CONTRIBUTING.md", False, False, True, False),
        (".github/workflows/ci.yml", False, False, True, False),
        ("PKG-INFO", False, False, True, False),
        ("src/pkg/__init__.pyi", False, False, False, True),
    ],
)
def test_path_classifier_table(path: str, test: bool, changelog: bool, notes: bool, stub: bool) -> None:
    assert (is_test_path(path), is_changelog_path(path), is_notes_path(path), is_stub_path(path)) == (
        test, changelog, notes, stub)
