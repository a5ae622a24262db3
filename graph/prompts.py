"""Prompts and tool definitions for the LLM path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sift.retrievers.docql import DOCQL_TOOL_DESCRIPTION

PLANNER_SYSTEM = """\
You plan how to look up the answer to a question about a software project's code and docs.
Reply with one JSON object only, with these keys:
question_type (locate|explain|list|doc|follow-up|chit-chat), need_retrieval (bool),
standalone (the question rewritten to stand alone, resolving pronouns against the conversation),
identifiers (code names it mentions), key_terms (content words), intent (code|doc|both),
index_type (file for "what does the project do", function for "how is X computed", doc for usage, else all),
docql (DocQL queries such as $.code.function("name") or $.content.heading("Title") when it names a symbol or
section), subqueries (one per part of a multi-part question)."""


def planner_user(question: str, history: Sequence[dict[str, Any]]) -> str:
    """The planner's user message: recent turns, then the question."""
    turns = "\n".join(f"Q: {t.get('question')}\nA: {str(t.get('answer'))[:300]}" for t in history[-3:])
    return (f"Conversation so far:\n{turns}\n\n" if turns else "") + f"Question: {question}"


AGENT_SYSTEM = """\
You are a senior engineer answering questions about a code base. You are given numbered evidence [n] with
file paths and line numbers. You may call tools to find more: search, list_file_content and docql; their
results become new numbered evidence. When the evidence is enough (or nothing more can be found), stop
calling tools and say so in one line; you will then be asked for the final answer."""

AGENT_JSON_SYSTEM = """\
You find evidence to answer a question about a code base. You are given numbered evidence [n] with file paths
and line numbers. Reply with one JSON object only: the next tool to call, or that you are done.
{"tool": "search", "arguments": {"question": "words to search for"}}
{"tool": "list_file_content", "arguments": {"file_path": "path/of/file.py", "start_line": 1, "end_line": 40}}
{"tool": "docql", "arguments": {"query": "$.code.function(\\"name\\")"}}
{"tool": "done"}
Search for what the evidence does not show yet. Say done when the evidence answers the question."""

WRITER_SYSTEM = """\
You are a senior engineer answering a question about a code base from numbered evidence [n] (file paths and
line numbers). Use only the evidence. Reply with one JSON object."""

FINAL_ANSWER = """\
Now give the final answer as one JSON object:
{"answer": "...", "citations": [{"evidence_id": n, "start_line": a, "end_line": b}], "not_found": false}
Every sentence of the answer must end with the [n] markers of the evidence it relies on. Put code names in
backticks only when they appear in the cited lines. If the evidence does not answer the question, set
not_found to true and say "Not found in the indexed sources." Never guess."""

SUMMARY_SYSTEM = """\
Tools are no longer available. Using only the numbered evidence, write the best answer you can."""

SUMMARY_CLOSING = """\
Reply with one JSON object {"answer": "...", "citations": [{"evidence_id": n}], "not_found": bool}. Every
sentence ends with its [n] markers. If the evidence does not answer the question, say "Not found in the indexed
sources." and set not_found to true."""


def agent_user(question: str, evidence_block: str, k: int) -> str:
    """The agent's and the writer's user message: the evidence, the question and K."""
    return (f"Evidence:\n{evidence_block or '(none yet)'}\n\nQuestion: {question}\n"
            f"Cite at least {max(1, k)} evidence item(s).")


def tool_result(name: str, text: str) -> str:
    """A tool's result as the JSON protocol shows it to the model (a user turn)."""
    return f"Result of {name}:\n{text}\n\nReply with the next JSON object."


def invalid_reply(reason: str) -> str:
    """What a retry after an invalid reply tells the model."""
    return f"That reply was not valid ({reason}). Reply again with one complete JSON object only."


TOOL_SPECS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "search",
        "description": "Semantic + keyword search. index_type 'file' for an overview of files, 'function' for "
                       "implementation details, 'doc' for documentation, 'all' for everything.",
        "parameters": {"type": "object", "properties": {
            "question": {"type": "string"},
            "index_type": {"type": "string", "enum": ["file", "function", "doc", "all"]},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 10},
        }, "required": ["question"]}}},
    {"type": "function", "function": {
        "name": "list_file_content",
        "description": "Read lines of an indexed file (repository-relative path), numbered.",
        "parameters": {"type": "object", "properties": {
            "file_path": {"type": "string"},
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        }, "required": ["file_path"]}}},
    {"type": "function", "function": {
        "name": "docql",
        "description": DOCQL_TOOL_DESCRIPTION,
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
]
