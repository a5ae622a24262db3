"""Domain objects shared by every package.

Paths are repository-relative with forward slashes; line ranges are 1-based and inclusive.
Parsed objects (``ParsedNode``, ``DocumentTree``…) are what a parser returns before anything is stored;
stored objects (``Chunk``, ``Hit``…) carry database ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

MAX_QUESTION_CHARS = 2000
"""The longest question the graph, the API and the CLI accept (characters)."""

THREAD_ID_MAX = 128
"""The longest thread id a client may choose (``THREAD_ID`` is the whole rule)."""

THREAD_ID = rf"^[A-Za-z0-9_-][A-Za-z0-9_.:@+=-]{{0,{THREAD_ID_MAX - 1}}}$"
"""A thread id: letters, digits and ``_ - . : @ + =``, not starting with ``.`` (so never ``.`` or ``..``), at
most 128 characters. UUIDs, slugs and ``slack:C024BE91L`` fit; ``/``, whitespace and control characters do not."""


class SourceType(StrEnum):
    """What kind of source a file is: code, documentation, or other text."""

    CODE = "code"
    DOC = "doc"
    TEXT = "text"


class NodeKind(StrEnum):
    """Kinds of document-tree nodes."""

    FILE = "file"
    MODULE = "module"
    CLASS = "class"
    INTERFACE = "interface"
    STRUCT = "struct"
    ENUM = "enum"
    TRAIT = "trait"
    TYPE = "type"  # a named type alias (TypeScript's ``type X = …``)
    VARIABLE = "variable"  # a documented binding a module exports that is no function literal (``export const x = …``)
    FUNCTION = "function"
    METHOD = "method"
    DOCUMENT = "document"
    HEADING = "heading"


class ChunkKind(StrEnum):
    """What a chunk is: a file, a definition (function, method, class), a type-only declaration, a doc section.

    ``TYPE`` is a definition that declares and implements nothing: a TypeScript ``interface`` or ``type`` alias,
    anything under ``declare``, everything in a ``.d.ts`` file. It shares its value with ``NodeKind.TYPE``, so it
    is in ``CODE_KINDS`` (it is code, and a question about types finds it), and it is indexed with the functions
    (``index_level``); the ranker counts it, like a ``.pyi`` stub, as no implementation.
    """

    FILE = "file"
    FUNCTION = "function"
    DOC = "doc"
    TYPE = "type"


#: The three index levels a generation keeps vectors for (and a search may be narrowed to).
INDEX_LEVELS: tuple[str, ...] = (ChunkKind.FILE.value, ChunkKind.FUNCTION.value, ChunkKind.DOC.value)


def index_level(kind: str) -> str:
    """The index level (``INDEX_LEVELS``) a chunk of ``kind`` is searched in: a type declaration's is ``function``."""
    return ChunkKind.FUNCTION.value if kind == ChunkKind.TYPE else kind


CONTAINER_KINDS = frozenset(
    {NodeKind.CLASS, NodeKind.INTERFACE, NodeKind.STRUCT, NodeKind.ENUM, NodeKind.TRAIT, NodeKind.TYPE}
)
CALLABLE_KINDS = frozenset({NodeKind.FUNCTION, NodeKind.METHOD})
#: Node kinds that are code definitions (what a function chunk or a code hit can be about).
CODE_KINDS = CONTAINER_KINDS | CALLABLE_KINDS | {NodeKind.VARIABLE}


@dataclass(slots=True)
class ParsedNode:
    """One node of a document tree as a parser emits it.

    ``index`` is the node's position in ``DocumentTree.nodes``; ``parent`` is the parent's index (the file/document
    root has ``None``). Parents always come before their children.
    """

    index: int
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    parent: int | None = None
    level: int = 0
    signature: str | None = None
    docstring: str | None = None
    anchor: str | None = None
    # For headings: the line where the section body starts (after the title/underline).
    body_start_line: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ParsedEntity:
    """A named thing worth finding by name: class, function, HTTP endpoint, glossary term."""

    type: str  # "class" | "function" | "method" | "endpoint" | "term" | ...
    name: str
    start_line: int
    end_line: int
    node: int | None = None  # index of the ParsedNode it belongs to
    detail: str | None = None  # e.g. "GET /users/{id}" or a term's definition


@dataclass(slots=True)
class ParsedRef:
    """A call site: inside node ``caller`` (index), at ``line``, a call to ``callee``.

    ``callee`` is the name as written (``validate_token``, ``self.check``, ``auth.check``);
    ``callee_qualified`` is filled when an import in the file makes the target visible. ``bound_locally``: the
    callee is a bare name the calling function binds itself (a parameter, a loop or assigned variable;
    ``ingest.parsers.scopes``), so the call is of that value, not of a definition with that name.
    """

    caller: int | None
    callee: str
    line: int
    callee_qualified: str | None = None
    bound_locally: bool = False


@dataclass(slots=True)
class DocumentTree:
    """Everything a parser learned about one file. ``nodes[0]`` is the file/document root."""

    path: str
    language: str
    source_type: SourceType
    nodes: list[ParsedNode]
    entities: list[ParsedEntity] = field(default_factory=list)
    refs: list[ParsedRef] = field(default_factory=list)
    parser: str = ""


def display_name(symbol: str, part: int | None = None, module_code: bool = False) -> str:
    """How a chunk is named to readers and the embedder: ``Schema.load (part 2)``, ``fields.py (module code)``.

    The name is computed from the identity fields, never parsed back: code reads ``symbol``, ``part`` and
    ``module_code`` themselves.
    """
    name = f"{symbol} (module code)" if module_code else symbol
    return f"{name} (part {part})" if part is not None else name


@dataclass(slots=True)
class ChunkDraft:
    """A chunk before it is stored: what gets embedded and keyword-indexed.

    ``symbol`` is what the chunk is about: a definition's name inside its file (``Schema.Meta``), a doc section's
    heading, a file's path, or the file's root name for code outside every definition (``module_code``). A
    definition or stretch of code too long for one chunk is split into windows numbered by ``part`` from 1.
    """

    kind: ChunkKind
    node: int | None  # index into DocumentTree.nodes
    symbol: str
    start_line: int
    end_line: int
    text: str
    heading_path: str | None = None
    part: int | None = None
    module_code: bool = False

    @property
    def name(self) -> str:
        """The display name (see :func:`display_name`)."""
        return display_name(self.symbol, self.part, self.module_code)


class Frozen(BaseModel):
    """Base for immutable pydantic domain models."""

    model_config = ConfigDict(frozen=True)


class ChunkIdentity(BaseModel):
    """What a located span is about: a chunk's ``symbol``, ``part`` and ``module_code`` (see :class:`ChunkDraft`).

    A span that is not a chunk (a file read, a DocQL row) is its ``name`` alone: ``symbol`` defaults to it.
    """

    symbol: str = ""
    part: int | None = None
    module_code: bool = False

    @model_validator(mode="before")
    @classmethod
    def _symbol_defaults_to_name(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("symbol") and "name" in data:
            return {**data, "symbol": data["name"]}
        return data


class Chunk(Frozen):
    """A stored chunk with its metadata filters."""

    id: int
    kb: str
    tenant: str
    file_id: int
    node_id: int | None
    kind: ChunkKind
    source_type: SourceType
    path: str
    language: str
    name: str
    symbol: str
    part: int | None = None
    module_code: bool = False
    heading_path: str | None = None
    start_line: int
    end_line: int
    public: bool = False
    content_hash: str
    text: str


class Filters(Frozen):
    """Metadata filters applied inside every channel before ranking."""

    kb: str
    tenant: str | None = None
    source_type: SourceType | None = None
    path_glob: str | None = None
    language: str | None = None
    public_only: bool = False


class Span(BaseModel):
    """A located span of one file: its lines, what kind of thing it is, its display name and the score that
    ranked it (a channel's, fusion's, or the evidence's)."""

    path: str
    start_line: int
    end_line: int
    kind: str
    name: str
    score: float


class Copy(Frozen):
    """The lines of another file that repeat a hit's definition (a bundle, another module format's build)."""

    path: str
    start_line: int
    end_line: int


class Hit(Frozen, ChunkIdentity, Span):
    """One ranked, located piece of evidence from a channel (or from fusion); ``name`` is for display."""

    chunk_id: int | None
    node_id: int | None
    channel: str
    rank: int
    snippet: str = ""
    channels: tuple[str, ...] = ()
    copies: tuple[Copy, ...] = ()  # fused search: the same definition in other files (``retrievers.copies``)
