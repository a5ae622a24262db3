"""Request and response bodies of the REST API (pydantic; they are the OpenAPI schema)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

KB_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
THREAD_ID = r"^[A-Za-z0-9_-]{1,64}$"
Channel = Literal["bm25", "vector", "smart"]


def _utc(value: datetime) -> datetime:
    """Database timestamps are naive UTC (CURRENT_TIMESTAMP); say so in the JSON (RFC 3339 needs an offset)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


Timestamp = Annotated[datetime, AfterValidator(_utc)]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class ChatRequest(_Request):
    """Ask a question; omit ``thread_id`` to start a new thread."""

    kb: str = Field(pattern=KB_NAME, examples=["myproject"])
    # the graph's limit; at least one visible character (JSON Schema patterns match anywhere)
    message: str = Field(min_length=1, max_length=2000, pattern=r"\S", examples=["where is the auth token validated?"])
    thread_id: str | None = Field(default=None, pattern=THREAD_ID)


class SearchRequest(_Request):
    """Fused search over a knowledge base (no LLM)."""

    kb: str = Field(pattern=KB_NAME)
    query: str = Field(min_length=1, max_length=2000, examples=["validate token"])
    k: int = Field(default=10, ge=1, le=200)
    channels: Literal["all", "bm25", "vector", "smart"] | list[Channel] = "all"
    index: Literal["all", "file", "function", "doc"] = "all"
    path_glob: str | None = Field(default=None, min_length=1, max_length=500, examples=["src/**"])
    language: str | None = Field(default=None, min_length=1, max_length=40)
    source_type: Literal["code", "doc", "text"] | None = None


class DocqlRequest(_Request):
    """A DocQL query, e.g. ``$.code.class("AuthService")``."""

    kb: str = Field(pattern=KB_NAME)
    query: str = Field(min_length=1, max_length=2000, examples=['$.toc[?(@.level == 1)]'])
    limit: int = Field(default=50, ge=1, le=500)


class KbCreate(_Request):
    """Create a knowledge base from a server-side directory and start its first ingest."""

    name: str = Field(pattern=KB_NAME)
    path: str = Field(min_length=1, max_length=4096)
    public: bool = False


class IngestRequest(_Request):
    """Re-ingest a knowledge base, from ``path`` or (when omitted) from its recorded root."""

    path: str | None = Field(default=None, min_length=1, max_length=4096)
    public: bool = False


class Health(BaseModel):
    status: str


class Ready(BaseModel):
    status: Literal["ready", "not_ready"]
    database: bool
    embedder: bool
    checkpointer: bool
    chat: bool
    indexes_loaded: int


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
    stats: dict[str, Any] | None = None
    index_bytes: int


class LastJob(BaseModel):
    id: int
    status: str
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
    source_path: str
    generation: int | None = None
    progress: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    failures: int
    error: str | None = None
    created_at: Timestamp | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    elapsed_s: float | None = None


class KbCreated(BaseModel):
    kb: str
    job: Job


class SearchResponse(BaseModel):
    type: Literal["search_result"]
    query: str
    files: dict[str, list[dict[str, Any]]]
    hits: list[dict[str, Any]]
    total: int
    smart_level: int | None = None
    timings_ms: dict[str, float]


class DocqlResponse(BaseModel):
    type: Literal["docql_result"]
    query: str
    files: dict[str, list[dict[str, Any]]]
    total: int
    truncated: bool


class FileContent(BaseModel):
    kb: str
    path: str
    start_line: int
    end_line: int
    total_lines: int
    lines: list[str]


class Turn(BaseModel):
    id: int
    question: str
    answer: str | None = None
    citations: list[dict[str, Any]]
    grounded: bool | None = None
    status: str
    error: str | None = None
    created_at: Timestamp | None = None


class ThreadSummary(BaseModel):
    thread_id: str
    kb: str
    title: str | None = None
    turns: int
    created_at: Timestamp | None = None
    updated_at: Timestamp | None = None


class ThreadDetail(ThreadSummary):
    messages: list[Turn]


class ThreadList(BaseModel):
    threads: list[ThreadSummary]
