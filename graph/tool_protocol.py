"""How the agent's model turn asks for tools: the server's own tool calls, or a JSON protocol for servers and
models without them.

Native: the tools are bound to the chat model (``bind_tools``); the server renders them through the model's chat
template and parses its tool calls. JSON: the model writes one JSON object, ``{"tool": name, "arguments": {…}}`` or
``{"tool": "done"}``, constrained by ``step_schema`` (``json_schema``, or JSON mode with the schema: a grammar on
llama.cpp; files to read are the evidence's, and a round's first step must call a tool, as ``tool_choice:
"required"`` would), and ``parse_step`` turns it into the same ``ToolCall`` a native reply carries, so the same
``tools`` steps run it. The transcript shows the model its own JSON and each result as the next user turn.

Either way a prompt is sized to the context: the evidence (re-rendered each turn, by rank) gets what the
instructions, the question and the transcript leave, and each tool result in the transcript is cut to a share
of a third of the room.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)

from sift.chat import InvalidOutput, status_of
from sift.graph import prompts
from sift.graph.budget import evidence_block, messages_tokens, prompt_room
from sift.graph.context import AskContext
from sift.graph.models import Evidence

_TOOLS_REFUSAL = re.compile(r"\btools?\b|tool_choice|function", re.IGNORECASE)
STRING_CHARS = 300  # the longest string argument the JSON protocol's grammar lets the model write


def _bounded(schema: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """``schema`` with every string property bounded, so a constrained model cannot ramble inside one, and a
    ``file_path`` one of ``paths`` when there are any (a weak model otherwise copies the example's path)."""
    out = copy.deepcopy(schema)
    for name, prop in out.get("properties", {}).items():
        if name == "file_path" and paths:
            prop["enum"] = list(dict.fromkeys(paths))
        elif prop.get("type") == "string" and "enum" not in prop:
            prop["maxLength"] = STRING_CHARS
    out["additionalProperties"] = False
    return out


def step_schema(specs: Sequence[dict[str, Any]], paths: Sequence[str] = (), done: bool = True) -> dict[str, Any]:
    """The JSON schema of one protocol step: one object per tool (its name and its arguments), or, with ``done``,
    that the search is done; files to read are the evidence's ``paths`` when given."""
    options: list[dict[str, Any]] = [
        {"type": "object", "properties": {"tool": {"const": s["function"]["name"]},
                                          "arguments": _bounded(s["function"]["parameters"], paths)},
         "required": ["tool", "arguments"], "additionalProperties": False}
        for s in specs
    ]
    if done:
        options.append({"type": "object", "properties": {"tool": {"const": "done"}}, "required": ["tool"],
                        "additionalProperties": False})
    return {"anyOf": options}


STEP_SCHEMA = step_schema(prompts.TOOL_SPECS)
TOOL_NAMES = frozenset(s["function"]["name"] for s in prompts.TOOL_SPECS)


def parse_step(value: Any, call_id: str) -> list[ToolCall]:
    """The tool call a protocol step asks for (none for done); ``InvalidOutput`` for anything else."""
    if not isinstance(value, dict) or not isinstance(value.get("tool"), str):
        raise InvalidOutput('the reply names no tool: expected {"tool": ..., "arguments": {...}}')
    name = value["tool"]
    if name == "done":
        return []
    if name not in TOOL_NAMES:
        raise InvalidOutput(f"unknown tool {name!r}; the tools are {', '.join(sorted(TOOL_NAMES))} (or done)")
    args = value.get("arguments")
    if not isinstance(args, dict):
        raise InvalidOutput(f"the arguments of {name} are not an object")
    return [ToolCall(name=name, args=args, id=call_id, type="tool_call")]


def repeats(calls: Sequence[ToolCall], transcript: Sequence[AnyMessage]) -> bool:
    """Whether every call of a step was already made in this round (same tool, same arguments): a model that
    repeats itself has nothing new to look for."""
    made = [(c["name"], c["args"]) for m in transcript if isinstance(m, AIMessage) for c in m.tool_calls]
    return bool(calls) and all((c["name"], c["args"]) in made for c in calls)


def rejects_tools(exc: BaseException) -> bool:
    """True when the server refused the request's ``tools`` (a 4xx or 5xx that says so)."""
    status = status_of(exc)
    return status is not None and status != 429 and bool(_TOOLS_REFUSAL.search(str(exc)))


def _transcript(messages: Sequence[AnyMessage], protocol: str, chars: int | None) -> list[BaseMessage]:
    """The round's model turns and tool results as the model is shown them, each result cut to ``chars``."""
    out: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            text = m.text if chars is None else m.text[:chars]
            out.append(HumanMessage(prompts.tool_result(m.name or "tool", text)) if protocol == "json"
                       else m.model_copy(update={"content": text}))
        elif isinstance(m, AIMessage):
            out.append(AIMessage(content=m.text) if protocol == "json" else m)
    return out


def turn_messages(ctx: AskContext, question: str, evidence: Sequence[Evidence], k: int,
                  transcript: Sequence[AnyMessage], protocol: str) -> list[BaseMessage]:
    """One agent turn's prompt: instructions, the evidence that fits (by rank) with the question, the round's
    transcript."""
    system = prompts.AGENT_JSON_SYSTEM if protocol == "json" else prompts.AGENT_SYSTEM
    room = prompt_room(ctx.settings)
    results = sum(isinstance(m, ToolMessage) for m in transcript)
    chars = None if room is None or not results else max(200, (room // 3) * 2 // results)
    shown = _transcript(transcript, protocol, chars)
    if room is None:
        block = evidence_block(evidence)
    else:
        fixed = [system, prompts.agent_user(question, "", k), *(m.text for m in shown)]
        block = evidence_block(evidence, max(0, room - messages_tokens(fixed)))
    return [SystemMessage(system), HumanMessage(prompts.agent_user(question, block, k)), *shown]
