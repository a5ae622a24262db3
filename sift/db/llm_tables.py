"""The LLM boundary parser's cache: validated answers keyed by (model, prompt version, content hash).

Defined on ``sift.db.tables.Base`` so Alembic migrates it with the rest
(``alembic/versions/0004_llm_parse_cache.py``). Rows are shared by every knowledge base: the same text parsed by
the same model with the same prompt gives the same answer, so a re-ingest makes no calls.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, Integer, String, func
from sqlalchemy.orm import Mapped, mapped_column

from sift.db.tables import Base


class LlmParseCache(Base):
    """One file's validated boundaries as the model found them (items) and what validation dropped."""

    __tablename__ = "llm_parse_cache"

    model_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    prompt_version: Mapped[str] = mapped_column(String(20), primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    items: Mapped[list] = mapped_column(JSON, nullable=False)
    dropped: Mapped[dict | None] = mapped_column(JSON)
    tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime, nullable=False, server_default=func.now())
