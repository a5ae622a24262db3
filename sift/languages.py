"""File extension → (language, source type). Languages named as tree-sitter-language-pack names them."""

from __future__ import annotations

from pathlib import PurePosixPath

from sift.models import SourceType

CODE_EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".cs": "csharp",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "bash",
    ".lua": "lua",
    ".sql": "sql",
}

# TypeScript declaration files: types only, describing code that lives elsewhere (as a Python ``.pyi`` stub does).
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


def is_declaration_file(path: str) -> bool:
    """A TypeScript declaration file (``.d.ts``, ``.d.mts``, ``.d.cts``): every definition in it is type-only."""
    return path.endswith(DECLARATION_SUFFIXES)


DOC_EXTENSIONS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".adoc": "text",
}

# Extension-less files that are documentation by convention.
DOC_NAMES: dict[str, str] = {
    "readme": "text",
    "license": "text",
    "copying": "text",
    "authors": "text",
    "changelog": "text",
    "changes": "text",
    "contributing": "text",
    "notice": "text",
}


def classify(path: str) -> tuple[str, SourceType]:
    """Return the language and source type of a repository-relative path."""
    p = PurePosixPath(path)
    ext = p.suffix.lower()
    if ext in CODE_EXTENSIONS:
        return CODE_EXTENSIONS[ext], SourceType.CODE
    if ext in DOC_EXTENSIONS:
        return DOC_EXTENSIONS[ext], SourceType.DOC
    if not ext and p.name.lower() in DOC_NAMES:
        return DOC_NAMES[p.name.lower()], SourceType.DOC
    return "text", SourceType.TEXT
