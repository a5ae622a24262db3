"""The JSON Lines format of evaluation question sets, and a loader that reports bad lines by number.

One JSON object per line::

    {"id": "q1", "query": "...", "gold_files": ["src/a.py"],
     "gold_spans": [{"path": "src/a.py", "start_line": 10, "end_line": 20}],
     "answer_contains": ["frobnicate"], "kind": "locate", "kb": "demo"}

Only ``id`` and ``query`` are required. Paths are repository-relative with forward slashes and line ranges
are 1-based and inclusive, as everywhere in sift. Types are checked strictly (``"3"`` is not a line number).
Any other key (``"notes"``, ``"corpus"``, ``"difficulty"``) is kept as the question's metadata
(``EvalQuestion.meta``): shown in reports, and a grouping key (``sift eval --by difficulty``). A key that is
a near miss of a known one (``gold_span``, ``Query``, ``kinds``: the same letters but one or two, by
``difflib``'s ratio) is rejected instead, so a typo cannot silently turn a question into one without gold
data. Blank lines are ignored.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sift.errors import InvalidQuery, NotFound

KINDS = ("locate", "explain", "doc", "list", "negative")
"""The question kinds used by the bundled sets (``kind`` itself accepts any string)."""
NEAR_MISS = 0.8
"""How alike (``difflib.SequenceMatcher.ratio``, case-folded) an unknown key and a known one must be for the
unknown key to count as a typo of the known one: ``gold_span``/``gold_spans`` is 0.95, ``kbs``/``kb`` 0.8,
``notes``/``kind`` 0.22."""


class GoldSpan(BaseModel):
    """A line range of one file that answers a question."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    path: str = Field(min_length=1)
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)

    @field_validator("path")
    @classmethod
    def _relative_path(cls, value: str) -> str:
        parts = PurePosixPath(value).parts
        if value.startswith("/") or "\\" in value or ".." in parts:
            raise ValueError("must be a repository-relative path with forward slashes and no '..'")
        return value

    @model_validator(mode="after")
    def _ordered(self) -> GoldSpan:
        if self.end_line < self.start_line:
            raise ValueError(f"end_line {self.end_line} is before start_line {self.start_line}")
        return self


class EvalQuestion(BaseModel):
    """One evaluation question with its gold files, gold spans and required answer phrases."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    gold_files: list[str] = Field(default_factory=list)
    gold_spans: list[GoldSpan] = Field(default_factory=list)
    answer_contains: list[str] = Field(default_factory=list)
    kind: str | None = None
    kb: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    """Every other key of the line, kept as it was written (see the module docstring)."""

    @model_validator(mode="before")
    @classmethod
    def _collect_meta(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        known = set(cls.model_fields) - {"meta"}
        extra = {k: v for k, v in raw.items() if k not in known}
        for key in extra:
            typo = near_miss(key, known)
            if typo is not None:
                raise ValueError(f"unknown key {key!r}: did you mean {typo!r}? (a key unlike every known one "
                                 "is kept as metadata)")
        return {**{k: v for k, v in raw.items() if k in known}, "meta": extra}

    @field_validator("id", "query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("answer_contains")
    @classmethod
    def _no_blank_phrases(cls, value: list[str]) -> list[str]:
        if any(not phrase.strip() for phrase in value):
            raise ValueError("phrases must not be blank")
        return value


def near_miss(key: str, known: set[str]) -> str | None:
    """The known key that ``key`` looks like a typo of (``NEAR_MISS``), or None when it is a new key."""
    folded = {k.casefold(): k for k in known}
    match = difflib.get_close_matches(key.casefold(), list(folded), n=1, cutoff=NEAR_MISS)
    return folded[match[0]] if match else None


@dataclass(frozen=True)
class LineError:
    """A line of a question set that was skipped, with its 1-based line number and the reason."""

    line: int
    message: str
    column: int | None = None


def _describe(error: ValidationError) -> str:
    """Flatten pydantic's error list into one readable sentence per problem."""
    parts = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def parse_line(text: str, line: int) -> EvalQuestion | LineError:
    """Parse one non-blank line into a question, or describe why it is not one."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return LineError(line, f"invalid JSON: {exc.msg} (column {exc.colno})", exc.colno)
    if not isinstance(raw, dict):
        return LineError(line, f"expected a JSON object, got {type(raw).__name__}")
    try:
        return EvalQuestion.model_validate(raw)
    except ValidationError as exc:
        return LineError(line, _describe(exc))


def load_questions(path: str | Path, *, strict: bool = False) -> tuple[list[EvalQuestion], list[LineError]]:
    """Read a JSONL question set; bad lines are skipped and reported, or raise ``InvalidQuery`` when strict."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise NotFound(f"question set {path} does not exist; pass the path of a .jsonl file") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = raw.count(b"\n", 0, exc.start) + 1
        raise InvalidQuery(
            f"{path} is not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} (line {bad_line}) is "
            f"{exc.reason}; save the file as UTF-8",
            field=f"line {bad_line}",
        ) from exc
    questions: list[EvalQuestion] = []
    errors: list[LineError] = []
    first_line: dict[str, int] = {}
    # Split on newlines only: str.splitlines would also break on U+2028 and friends inside JSON strings.
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        parsed = parse_line(line, number)
        if isinstance(parsed, EvalQuestion) and parsed.id in first_line:
            parsed = LineError(
                number, f"duplicate id {parsed.id!r} (first used on line {first_line[parsed.id]})"
            )
        if isinstance(parsed, LineError):
            if strict:
                raise InvalidQuery(
                    f"{path}, line {parsed.line}: {parsed.message}; fix or remove that line",
                    field=f"line {parsed.line}",
                    position=parsed.column,
                )
            errors.append(parsed)
            continue
        first_line[parsed.id] = number
        questions.append(parsed)
    return questions, errors


class Judgment(GoldSpan):
    """A pooled relevance judgment: whether a span that a run returned answers a question (``eval/judgments/``)."""

    id: str = Field(min_length=1)
    relevant: bool
    reason: str = ""


def load_judgments(path: str | Path) -> dict[str, list[Judgment]]:
    """The judgments of a JSONL judgments file, per question id (strict: a bad line raises ``InvalidQuery``
    naming it). A missing file means no judgments."""
    path = Path(path)
    if not path.exists():
        return {}
    judgments: dict[str, list[Judgment]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            judged = Judgment.model_validate_json(line)
        except ValidationError as exc:
            raise InvalidQuery(f"{path}, line {number}: {_describe(exc)}", field=f"line {number}") from exc
        judgments.setdefault(judged.id, []).append(judged)
    return judgments

