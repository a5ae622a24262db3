"""The answer's models, shared by the graph and its writer: the plan, retrieve tasks and their results, evidence,
drafts, citations, the checker's verdict, confidence and the final answer.

Pure pydantic (no LangGraph): the REST schemas, the CLI and the writer (``graph/writer``) import them without the
state machine. ``graph/state.py`` holds the graph's state, built from these models, and its reducers.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sift.models import ChunkIdentity, Span
from sift.retrievers.question import QuestionShape
from sift.retrievers.question import question_shape as read_shape

QuestionType = Literal["locate", "explain", "list", "doc", "follow-up", "chit-chat"]
Intent = Literal["code", "doc", "both"]
IndexType = Literal["file", "function", "doc", "all"]
SearchChannel = Literal["bm25", "vector", "smart"]
SEARCH_CHANNELS: tuple[SearchChannel, ...] = ("bm25", "vector", "smart")
NOT_FOUND = "Not found in the indexed sources."
#: A citation marker in an answer's text: ``[n]``, the id of an evidence item (its number once the answer is final).
MARKER = re.compile(r"\[(\d+)\]")


def cited_ids(text: str) -> list[int]:
    """The evidence numbers ``[n]`` in a text, in first-mention order."""
    return list(dict.fromkeys(int(m) for m in MARKER.findall(text)))


class PlanSummary(BaseModel):
    """What the planner decided, as answers and progress events show it (the ``Plan`` without its internals)."""

    question_type: QuestionType = Field("explain", examples=["locate"])
    need_retrieval: bool = True
    standalone: str = Field("", description="The question rewritten to stand alone (follow-ups resolved).")
    identifiers: list[str] = Field(default_factory=list)
    key_terms: list[str] = Field(default_factory=list)
    intent: Intent = "both"
    channels: list[SearchChannel] = Field(default_factory=lambda: list(SEARCH_CHANNELS))
    index_type: IndexType = "all"
    source_type: Literal["code", "doc"] | None = None
    docql: list[str] = Field(default_factory=list)
    subqueries: list[str] = Field(default_factory=list)
    k_citations: int = 1
    budget_ms: int = 1500
    strategy: str = "initial"
    planner: Literal["rules", "llm"] = Field(default="rules", description="Who planned: the rules, or the model's plan "
                                             "merged into theirs (SIFT_LLM_ROLES lists planner).")
    planner_note: str | None = Field(default=None, description="Why the model's plan was not used, when it failed.")


class Plan(PlanSummary):
    """What the planner decided: question type, terms, channels, index level, DocQL, sub-queries, budget, K."""

    model_config = ConfigDict(extra="ignore")

    read_files: list[str] = Field(default_factory=list, description="Paths whose whole text joins the evidence.")
    top_k: int = 8
    question_shape: QuestionShape | None = Field(default=None, description="What the wording of ``standalone`` "
                                                 "asks, read once when the plan was made (see ``shape``).")

    @property
    def shape(self) -> QuestionShape:
        """The shape of ``standalone``: the one the planner read, else (a plan checkpointed before plans carried
        it, or one whose ``standalone`` was set without it) read now."""
        if self.question_shape is not None and self.question_shape.text == self.standalone:
            return self.question_shape
        return read_shape(self.standalone)

    def summary(self) -> PlanSummary:
        """The compact plan shown in answers and progress events."""
        return PlanSummary.model_validate(self.model_dump(include=set(PlanSummary.model_fields)))


class RetrieveTask(BaseModel):
    """One parallel retrieve branch: a channel over one sub-query (or a DocQL query, or a file to read)."""

    channel: SearchChannel | Literal["docql", "file"]
    query: str
    kb: str
    tenant: str = "default"
    index_type: str = "all"
    source_type: Literal["code", "doc"] | None = None
    k: int = 20
    round: int = 0


class RankedChunk(BaseModel):
    """A chunk a search channel ranked: all a checkpoint keeps, the fuse node rebuilds its Hit from the index."""

    chunk_id: int
    rank: int
    score: float


class ChannelResult(BaseModel):
    """What one retrieve branch returned, with its timing (used to show the branches ran concurrently).

    A search channel's hits are chunks, kept as ids, ranks and scores (``ranked``); DocQL rows and file reads
    are no chunks, so their few hits are kept whole (``spans``).
    """

    channel: str
    query: str
    round: int = 0
    ranked: list[RankedChunk] = Field(default_factory=list)
    spans: list[dict[str, Any]] = Field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0
    elapsed_ms: float = 0.0
    error: str | None = None
    timed_out: bool = False
    unavailable: bool = False
    """The channel cannot serve this generation yet (its vectors are still being computed): a degraded answer."""

    @property
    def key(self) -> str:
        """Identity of the branch within a round."""
        return f"{self.round}:{self.channel}:{self.query}"

    @property
    def size(self) -> int:
        """How many hits the branch returned."""
        return len(self.ranked) + len(self.spans)


class EvidenceItem(Span):
    """A numbered piece of evidence the answer could cite, as the answer lists it."""

    id: int


class Evidence(EvidenceItem, ChunkIdentity):
    """A numbered piece of evidence: exact lines of one file version, with the text the answer may quote."""

    channels: list[str] = Field(default_factory=list)
    text: str = ""
    signature: str | None = None
    docstring: str | None = None
    content_hash: str = ""
    callers: list[dict[str, Any]] = Field(default_factory=list)
    top_in: list[str] = Field(default_factory=list)
    """The search channels that ranked this span, or a chunk overlapping it, among their first few."""
    fence: str | None = None
    """For a documentation chunk that starts inside a fenced code block opened above it, the block's info string
    ("js", or "" when bare); None otherwise."""
    parent_heading: str | None = None
    """For a documentation section whose heading its file repeats (a changelog's "Bug Fixes" under every
    release), the heading of the section it sits in; None otherwise."""
    subsections: list[str] = Field(default_factory=list)
    """For a documentation section, the headings of the sections directly under it that its lines do not reach
    (at most ``retrieval.MAX_SUBSECTIONS``), in file order; the answer names the first ``writer.composition.NAMED_SUBSECTIONS``."""

    @property
    def key(self) -> str:
        """Identity of the cited span."""
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def label(self) -> str:
        """``[n] path:start-end``: how evidence is shown to a reader or a model."""
        return f"[{self.id}] {self.path}:{self.start_line}-{self.end_line}"

    def item(self) -> EvidenceItem:
        """This evidence as the answer lists it."""
        return EvidenceItem.model_validate(self.model_dump(include=set(EvidenceItem.model_fields)))


class Citation(BaseModel):
    """A checked citation: the evidence it points to, the file and the exact lines, with the cited text."""

    evidence_id: int = Field(description="The [n] marker in the answer text.", examples=[1])
    path: str = Field(examples=["pkg/auth.py"])
    start_line: int = Field(examples=[12])
    end_line: int = Field(examples=[14])
    snippet: str = ""
    valid: bool = True


class FileCitation(BaseModel):
    """A citation listed under its file in ``Answer.files``."""

    type: str = Field(description="Kind of the cited span (function, class, doc, lines, …).")
    name: str
    line: int
    start_line: int
    end_line: int
    evidence_id: int
    snippet: str = ""


ConfidenceLevel = Literal["high", "medium", "low"]


class Confidence(BaseModel):
    """How likely an answer is right: a level, the fitted model's probability, and the signals it came from."""

    level: ConfidenceLevel = "low"
    score: float = 0.0
    signals: dict[str, float] = Field(default_factory=dict)


class DraftNote(StrEnum):
    """Why the extractive writer wrote what it did: a draft's ``note``, on which the graph's routers branch.

    A ``StrEnum``: ``Draft.note`` holds its value, a plain string, so checkpoints and answers are unchanged (a
    model's failure is noted in free text there too)."""

    NO_EVIDENCE = "no-evidence"
    """Nothing was retrieved."""
    ABSENT_TERMS = "absent-terms"
    """The evidence (or what it would cite) lacks the question's rare words, or a thing the question names."""
    ABSENT_FROM_CORPUS = "absent-from-corpus"
    """Weak evidence, and a question word no chunk contains: no other round can supply it (ends the search)."""
    WEAK_EVIDENCE = "weak-evidence"
    """The evidence covers too little of the question."""
    WEAK_YES = "weak-yes"
    """Whether the project has or can do something, answered with low confidence (ends the search)."""
    NEAR_IN_MEANING = "near-in-meaning"
    """An answer written because the first evidence item is close to the question in meaning."""


class Draft(BaseModel):
    """A generated answer before checking: text with ``[n]`` markers, optional narrowed line ranges."""

    text: str
    citations: list[Citation] = Field(default_factory=list)
    mode: Literal["extractive", "llm"] = "extractive"
    tokens: int = 0
    degraded: bool = False
    not_found: bool = False
    note: str | None = None
    confidence: Confidence | None = None
    cut_short: str | None = None
    """Why the search stopped before it had run its course (the plan's time budget), for ``degraded_reasons``."""


class Verdict(BaseModel):
    """The checker's decision over a draft."""

    ok: bool
    valid: list[int] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)


class Answer(BaseModel):
    """The final answer every entry point (CLI, REST, Studio, eval) returns."""

    text: str
    citations: list[Citation]
    files: dict[str, list[FileCitation]] = Field(default_factory=dict)
    grounded: bool
    rounds: int = 0
    fallbacks: int = 0
    plan: PlanSummary | None = None
    tokens: int = 0
    elapsed_ms: float = 0.0
    mode: Literal["extractive", "llm"] = "extractive"
    thread_id: str | None = None
    degraded: bool = False
    degraded_reasons: list[str] = Field(default_factory=list, description="What this answer had to do without: "
                                        "a retrieve branch that ran out of time, a search the time budget stopped, an LLM that failed, the "
                                        "vector channel while the knowledge base is still being embedded.")
    evidence: list[EvidenceItem] = Field(default_factory=list)
    confidence: ConfidenceLevel = Field("low", description="How likely the answer is right (see the README): high, "
                                        "medium, or low; never high for a degraded answer; a not-found is always low.")
    confidence_score: float = Field(0.0, ge=0.0, le=1.0, description="The calibrated probability behind the level.")
    confidence_signals: dict[str, float] = Field(default_factory=dict, description="What the score was computed "
                                                 "from: first/second candidate margin, coverage, channel agreement.")
