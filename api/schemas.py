"""Request and response bodies of the REST API (pydantic; they are the OpenAPI schema).

The answer and its parts are the graph's models (``sift.graph.models``), not copies of them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from sift.graph import models as graph
from sift.graph.models import Citation
from sift.models import MAX_QUESTION_CHARS, THREAD_ID, THREAD_ID_MAX
from sift.names import NAME_PATTERN

KB_NAME = NAME_PATTERN
Channel = Literal["bm25", "vector", "smart"]

# Litestar's OpenAPI drops a pydantic field's pattern, and every constraint inside an optional union; they are
# enforced by pydantic and declared again as schema extras (``json_schema_extra``, ``_declare``), which it keeps.
Title = Annotated[str, Field(min_length=1, max_length=500)]
# A thread's metadata: flat key → scalar pairs (a chat channel, a user id), so the schema types every value.
Metadata = dict[str, str | int | float | bool | None]
PathGlob = Annotated[str, Field(min_length=1, max_length=500)]
Language = Annotated[str, Field(min_length=1, max_length=40)]
ServerPath = Annotated[str, Field(min_length=1, max_length=4096)]


def _declare(**limits: Any) -> Any:
    """An optional field's default (None) with its type's limits declared for the OpenAPI document."""
    examples = limits.pop("examples", None)
    return Field(default=None, examples=examples, json_schema_extra=limits)


def _utc(value: datetime) -> datetime:
    """Database timestamps are naive UTC (CURRENT_TIMESTAMP); say so in the JSON (RFC 3339 needs an offset)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


Timestamp = Annotated[datetime, AfterValidator(_utc)]
# Constraints on the optional type itself, not inside it: Litestar's schema keeps them only there.
OptionalThreadId = Annotated[str | None, StringConstraints(pattern=THREAD_ID, max_length=THREAD_ID_MAX)]


class IngestCounters(BaseModel):
    """Counters of an ingest run (files, chunks, timings…); which keys appear depends on the run."""

    model_config = ConfigDict(extra="allow")


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class ChatRequest(_Request):
    """Ask a question; omit ``thread_id`` to start a new thread, or name one: the first message to an id this
    tenant has not used starts a thread of that id."""

    kb: str = Field(pattern=KB_NAME, examples=["myproject"], json_schema_extra={"pattern": KB_NAME})
    # the graph's limit; at least one visible character (JSON Schema patterns match anywhere)
    message: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=r"\S", json_schema_extra={"pattern": r"\S"},
                         examples=["where is the auth token validated?"])
    thread_id: OptionalThreadId = Field(default=None, examples=["slack-C024BE91L"])


class ThreadCreate(_Request):
    """Create a thread under the id in the path (idempotent); a title or metadata given replaces the stored one."""

    kb: str = Field(pattern=KB_NAME, examples=["myproject"], json_schema_extra={"pattern": KB_NAME})
    title: Title | None = _declare(min_length=1, max_length=500)
    metadata: Metadata | None = Field(default=None, examples=[{"channel": "C024BE91L"}])


class SearchRequest(_Request):
    """Fused search over a knowledge base (no LLM)."""

    kb: str = Field(pattern=KB_NAME, json_schema_extra={"pattern": KB_NAME})
    query: str = Field(min_length=1, max_length=2000, examples=["validate token"])
    k: int = Field(default=10, ge=1, le=200)
    channels: Literal["all", "bm25", "vector", "smart"] | list[Channel] = "all"
    index: Literal["all", "file", "function", "doc"] = "all"
    path_glob: PathGlob | None = _declare(min_length=1, max_length=500, examples=["src/**"])
    language: Language | None = _declare(min_length=1, max_length=40)
    source_type: Literal["code", "doc", "text"] | None = None


class DocqlRequest(_Request):
    """A DocQL query, e.g. ``$.code.class("AuthService")``."""

    kb: str = Field(pattern=KB_NAME, json_schema_extra={"pattern": KB_NAME})
    query: str = Field(min_length=1, max_length=2000, examples=['$.toc[?(@.level == 1)]'])
    limit: int = Field(default=50, ge=1, le=500)


class KbCreate(_Request):
    """Create a knowledge base from a server-side directory and start its first ingest."""

    name: str = Field(pattern=KB_NAME, json_schema_extra={"pattern": KB_NAME})
    path: str = Field(min_length=1, max_length=4096)
    public: bool = False


class IngestRequest(_Request):
    """Re-ingest a knowledge base, from ``path`` or (when omitted) from its recorded root."""

    path: ServerPath | None = _declare(min_length=1, max_length=4096)
    public: bool = False


class Health(BaseModel):
    status: str


class Ready(BaseModel):
    """Readiness; the parts (and the reason when not ready) only for a caller with a valid key, or with auth off."""

    status: Literal["ready", "not_ready"]
    database: bool | None = None
    embedder: bool | None = None
    checkpointer: bool | None = None
    chat: bool | None = None
    indexes_loaded: int | None = None
    data_dir: bool | None = None
    reason: str | None = None


class KbSummary(BaseModel):
    name: str
    tenant: str
    root_path: str
    public: bool
    generation: int
    files: int
    nodes: int
    chunks: int
    chunks_by_kind: dict[str, int]
    updated_at: Timestamp | None = None


class KbList(BaseModel):
    kbs: list[KbSummary]


class GenerationInfo(BaseModel):
    number: int
    status: str
    created_at: Timestamp | None = None
    published_at: Timestamp | None = None
    stats: IngestCounters | None = None
    index_bytes: int


class LastJob(BaseModel):
    id: int
    status: str
    ready: str | None = None
    generation: int | None = None
    created_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    elapsed_s: float | None = None
    error: str | None = None
    failures: int


class KbDetail(KbSummary):
    generations: list[GenerationInfo]
    last_job: LastJob | None = None


class Job(BaseModel):
    id: int
    kb: str
    status: Literal["queued", "running", "succeeded", "failed"]
    ready: Literal["searchable", "complete"] | None = Field(None, description=(
        "How far the job's knowledge base can be searched: searchable once its keyword index (BM25, smart, DocQL, "
        "file reads) is published, while the running job embeds; complete once the vectors are published too."))
    source_path: str
    generation: int | None = None
    progress: IngestCounters | None = None
    result: IngestCounters | None = None
    failures: int
    error: str | None = None
    created_at: Timestamp | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    elapsed_s: float | None = None


class KbCreated(BaseModel):
    kb: str
    job: Job


class CopySpan(BaseModel):
    """The same definition in another file of the package: a bundle, or another module format's build."""

    path: str = Field(examples=["lib/module/main.mjs"])
    start_line: int
    end_line: int


class FileHit(BaseModel):
    """One search hit under its file: what it is, its exact lines and a snippet."""

    type: str = Field(description="Kind of span: file, class, function, method, doc, …", examples=["function"])
    name: str = Field(examples=["pkg/auth.py::AuthService.validate_token"])
    start_line: int
    end_line: int
    score: float
    rank: int = Field(description="1-based rank in the fused list.")
    channels: list[str] = Field(description="Channels that found it.", examples=[["bm25", "vector"]])
    snippet: str | None = None
    copies: list[CopySpan] = Field(default_factory=list, description=(
        "Other files with (nearly) the same definition; the hit is the copy the package's manifest points to."))


class Hit(BaseModel):
    """One fused search hit, flat."""

    rank: int
    path: str = Field(examples=["pkg/auth.py"])
    start_line: int
    end_line: int
    type: str = Field(examples=["function"])
    name: str
    score: float
    channels: list[str]
    chunk_id: int | None = None
    node_id: int | None = None
    copies: list[CopySpan] = Field(default_factory=list, description="Other files with the same definition.")


class SearchResponse(BaseModel):
    type: Literal["search_result"]
    query: str
    files: dict[str, list[FileHit]] = Field(description="Hits grouped by file path, files in rank order.")
    hits: list[Hit]
    total: int
    smart_level: int | None = None
    timings_ms: dict[str, float]
    degraded_reasons: list[str] = Field(default_factory=list, description=(
        "What the search did without: the vector channel while the generation's embeddings are computed."))


class DocqlItem(BaseModel):
    """One DocQL result under its file: a heading, code node, call, file, entity, code block or match.

    The fields after the lines depend on ``type`` (``text``/``level``/``anchor`` for headings, ``name``/
    ``qualified_name``/``signature`` for code, ``source``/``content`` when the query asks for text, …).
    """

    model_config = ConfigDict(extra="allow")

    type: str = Field(examples=["heading"])
    line: int
    start_line: int
    end_line: int
    name: str | None = None
    text: str | None = None
    node_id: int | None = None
    children: list[DocqlItem] | None = Field(None, description="Nested nodes of `$.structure.tree()`.")


class DocqlResponse(BaseModel):
    type: Literal["docql_result"]
    query: str
    files: dict[str, list[DocqlItem]]
    total: int
    truncated: bool
    deadline_exceeded: bool = Field(
        False,
        description="A grep stopped at the query's time budget: `files` and `total` hold what it found by then.",
    )


class FileContent(BaseModel):
    kb: str
    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[str]


class Answer(graph.Answer):
    """The graph's final answer, as returned by ``POST /v1/chat``: always on a thread."""

    thread_id: str = Field(examples=["slack-C024BE91L"])


class Turn(BaseModel):
    id: int
    question: str
    answer: str | None = None
    citations: list[Citation]
    grounded: bool | None = None
    status: str
    error: str | None = None
    created_at: Timestamp | None = None


class ThreadSummary(BaseModel):
    thread_id: str
    kb: str
    title: str | None = None
    metadata: Metadata = Field(default_factory=dict)
    turns: int
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class ThreadDetail(ThreadSummary):
    messages: list[Turn]


class ThreadList(BaseModel):
    threads: list[ThreadSummary]
