"""Settings, read once at an entry point (CLI, app factory) from ``SIFT_*`` variables and passed down."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DATA_DIR_NAME = ".sift"
LLMRole = Literal["planner", "agent", "writer"]
LLM_ROLES: tuple[LLMRole, ...] = ("planner", "agent", "writer")


def find_data_dir(start: Path | None = None) -> Path:
    """The default data directory: the nearest ``.sift`` directory in ``start`` (the current folder) or one of
    its parents, found as git finds ``.git``; without one, ``.sift`` in ``start``, which the first ingest creates.

    So a knowledge base ingested in a project's root is found from every folder below it, and a ``~/.sift``
    serves every folder under the home directory that has no nearer one.
    """
    try:
        here = (start or Path.cwd()).absolute()
    except OSError:  # the current folder was removed
        return Path(DATA_DIR_NAME)
    for folder in (here, *here.parents):
        candidate = folder / DATA_DIR_NAME
        try:
            if candidate.is_dir():
                return candidate
        except OSError:  # a parent we may not read: keep looking further up
            continue
    return here / DATA_DIR_NAME


class Settings(BaseSettings):
    """Everything configurable about sift. Env prefix ``SIFT_`` (e.g. ``SIFT_DATA_DIR``)."""

    model_config = SettingsConfigDict(env_prefix="SIFT_", extra="ignore")

    data_dir: Path = Field(default_factory=find_data_dir, description="Where databases and index files live "
                           "(default: the nearest .sift in the current folder or a parent, else ./.sift).")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default is SQLite at DATA_DIR/sift.db."
    )
    index_dir: Path | None = Field(default=None, description="Index generations; default DATA_DIR/indexes.")
    tenant: str = Field(default="default", description="Tenant that owns knowledge bases made from the CLI.")

    # ingestion
    max_file_bytes: int = Field(default=1024 * 1024, description="Files larger than this are skipped.")
    ingest_batch_size: int = Field(default=200, description="Files per database write batch.")
    parse_timeout_s: float = Field(
        default=30.0, gt=0, description="A file whose parsing takes longer is skipped (reason parse_limit)."
    )
    parse_max_mb: int = Field(
        default=1024, gt=0, description="A file whose parsing needs more memory (MB) is skipped (parse_limit)."
    )
    doc_chunk_min_chars: int = 400
    doc_chunk_max_chars: int = 800
    function_chunk_max_lines: int = 120
    file_chunk_head_lines: int = 40

    # embeddings
    embed_model_path: Path | None = Field(
        default=None, description="Local sentence-transformers model dir; default the bundled all-MiniLM-L6-v2."
    )
    embed_base_url: str | None = None
    embed_api_key: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_batch_size: int = 64
    vector_index: Literal["flat", "hnsw"] = Field(default="flat", description="flat (exact) | hnsw (approximate).")
    search_backend: Literal["local", "postgres"] = Field(
        default="local",
        description="local: FAISS and BM25 files per generation, loaded by every replica; postgres: pgvector and "
                    "BM25 postings queried inside PostgreSQL (needs SIFT_DATABASE_URL there, with pgvector).",
    )
    generation_grace_s: float = Field(
        default=300.0, description="Keep an old generation while a replica has used it within this many seconds."
    )

    # LLM (optional; without it the extractive answerer is used)
    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_timeout_s: float = Field(
        default=30.0, gt=0,
        description="Seconds one model call may take. A local model on a CPU reads about 70 prompt tokens and "
                    "writes about 25 tokens a second, so `sift llm serve` prints a longer one to fit its context.",
    )
    llm_roles: str = Field(
        default="planner,agent,writer",
        description="Which roles the model plays, comma-separated: planner (rewrites the question and adds queries "
                    "to the rules' plan), agent (calls the search tools before the answer), writer (writes the "
                    "answer with [n] citations). A role left out is done without it: the rules' plan, no tool "
                    "calls, the extractive answer. Empty: the model is not used.",
    )
    llm_tools: Literal["native", "auto", "json"] = Field(
        default="native",
        description="How the agent calls tools: native (the server's tool calls, through the model's chat "
                    "template; the JSON protocol when the server rejects tools), auto (native, and the JSON "
                    "protocol too when the model's first turn calls no tool), json (always the JSON protocol: the "
                    "model writes one JSON object naming a tool and its arguments, grammar-constrained where the "
                    "server can; for models whose template has no tools).",
    )
    llm_context_tokens: int | None = Field(
        default=None, ge=512,
        description="The model's context length in tokens (printed by `sift llm serve`): prompts are cut to fit it, "
                    "whole evidence items in rank order. None: the prompt is not cut.",
    )
    llm_max_tokens: int = Field(default=1024, ge=16, description="Most tokens the model may write in one reply.")
    branch_timeout_ms: int = Field(
        default=1500, ge=0,
        description="Time bound of each parallel retrieve branch of an answer (ask, chat); a branch that runs out "
                    "is named in the answer's degraded_reasons. 0: no wall-clock bounds at all (neither this nor "
                    "the plan's time budget), so answers do not depend on the machine's load.",
    )
    llm_parser_concurrency: int = Field(default=4, description="Parallel LLM parser calls during an ingest.")
    llm_parser_token_budget: int = Field(
        default=1_000_000, description="Tokens the LLM parser may spend in one ingest (0: no limit)."
    )
    llm_parser_cost_per_1k: float = Field(
        default=0.0, description="Price per 1,000 tokens, for the ingest summary's cost (0: tokens only)."
    )

    @field_validator("llm_roles")
    @classmethod
    def _known_roles(cls, value: str) -> str:
        roles = [r.strip() for r in value.split(",") if r.strip()]
        unknown = [r for r in roles if r not in LLM_ROLES]
        if unknown:
            raise ValueError(f"unknown LLM role(s) {', '.join(unknown)}; the roles are {', '.join(LLM_ROLES)}")
        return ",".join(roles)

    def llm_plays(self, role: LLMRole) -> bool:
        """Whether ``role`` is one the model plays when one is configured (``llm_roles`` lists it)."""
        return role in self.llm_roles.split(",")

    def resolved_database_url(self) -> str:
        """The database URL in effect."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'sift.db').resolve()}"

    def resolved_index_dir(self) -> Path:
        """The directory that holds index generations."""
        return (self.index_dir or self.data_dir / "indexes").resolve()
