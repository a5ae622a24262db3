"""The MCP server: sift's retrieval and answers as tools, resources and a prompt, for coding agents.

Each tool is a thin call into what the REST API runs (the same functions, bodies and limits) and returns the REST
body as structured output. A ``SiftError`` becomes a tool error (``isError``) carrying the message the CLI
prints; any other failure is a tool error too, and the server goes on serving.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.types import ToolAnnotations
from pydantic import Field

from sift.api.mcp.state import StateSource
from sift.api.schemas import Answer, DocqlResponse, FileContent, KbList, SearchResponse
from sift.errors import SiftError
from sift.models import MAX_QUESTION_CHARS

#: Where an HTTP request's tenant is put by the auth middleware (``sift.api.mcp.http``).
TENANT_KEY = "sift_tenant"

DOCQL_SYNTAX = (
    "DocQL, a JSONPath-like query over the knowledge base's document trees. Roots: $.toc (headings), $.content "
    "(doc sections), $.code (code nodes), $.entities, $.files. Steps: .prop, [*], [n], [a:b]; filters "
    '[?(@.level == 1 && @.name ~= "auth")] with == != ~= =~ /re/i > >= < <= startsWith endsWith && || !. '
    'Functions: $.content.heading("Authentication"), $.content.grep("regex"), $.code.class("X"), '
    '$.code.function("f"), $.code.method("Cls.m"), $.code.query("name"), $.code.callers("f"), $.code.calls("f"), '
    "$.structure.tree(); a trailing .source or .content returns text. Results are grouped by file with exact "
    "line ranges; a syntax error names the column and points at it with a caret."
)

KbArg = Annotated[str, Field(description="Knowledge base name (list_kbs names them).", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
Name = Annotated[str, Field(min_length=1, max_length=500, description="A function, method or class name, "
                                                                      "bare or qualified (`Cls.method`).")]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)


def tenant_of(ctx: Context, default: str) -> str:
    """The caller's tenant: the one the HTTP auth middleware resolved, or ``default`` (stdio: ``$SIFT_TENANT``)."""
    request = ctx.request_context.request
    scope = getattr(request, "scope", None)
    if isinstance(scope, dict) and TENANT_KEY in scope:
        return str(scope[TENANT_KEY])
    return default


def _as_tool_error(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """A SiftError (bad query, unknown kb, path outside the kb…) becomes a tool error with the CLI's message."""

    @functools.wraps(fn)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except SiftError as exc:
            raise ToolError(exc.message) from exc

    return call


def _bind_kb(fn: Callable[..., Awaitable[Any]], kb: str | None) -> Callable[..., Awaitable[Any]]:
    """``fn`` itself when every call names its kb, else ``fn`` with ``kb`` fixed and left out of its schema."""
    if kb is None:
        return fn
    signature = inspect.signature(fn, eval_str=True)

    @functools.wraps(fn)
    async def bound(*args: Any, **kwargs: Any) -> Any:
        return await fn(*args, kb=kb, **kwargs)

    bound.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[p for name, p in signature.parameters.items() if name != "kb"])
    return bound


def build_server(source: StateSource, kb: str | None = None) -> MCPServer:
    """The MCP server over ``source``; with ``kb`` every tool works on that knowledge base and takes no ``kb``."""
    fixed = f" of knowledge base {kb!r}" if kb else ""
    server = MCPServer(
        "sift", version="0.1.0", log_level="WARNING",
        instructions=(f"sift answers questions about a software project{fixed} (its code and docs) with citations "
                      "to exact files and lines. Use search to find places, the find_* tools for definitions and "
                      "call sites, docql for structured queries, read_file for exact lines, ask for a cited answer."))
    tools: list[tuple[Callable[..., Awaitable[Any]], str, str]] = [
        (_search_tool(source), "search", "Ranked places in the code and docs for a query (BM25, vector and "
                                         "name-aware channels fused; no LLM): each hit has its path, exact lines, "
                                         "kind, symbol, score and a snippet. Use it to find where something is "
                                         "before reading files."),
        (_ask_tool(source), "ask", "A written answer to a question about the project, citing [n] evidence whose "
                                   "files and lines are checked against the stored sources, with its confidence "
                                   "(low, medium, high). Slower than search; pass thread_id to ask follow-ups."),
        (_docql_tool(source), "docql", f"Run a structured query. {DOCQL_SYNTAX}"),
        (_find_tool(source, "query"), "find_definition", "Where a function, method or class is defined (DocQL "
                                                         "$.code.query): its file, lines and signature."),
        (_find_tool(source, "callers"), "find_callers", "The call sites of a function or method (DocQL "
                                                        "$.code.callers): each caller with its file and line."),
        (_find_tool(source, "calls"), "find_calls", "What a function or method calls (DocQL $.code.calls): each "
                                                    "callee with the file and line of the call."),
        (_read_file_tool(source), "read_file", "Exact stored lines of an ingested file (1-based, inclusive), "
                                               "confined to the knowledge base; the lines citations and search "
                                               "hits point at."),
    ]
    for fn, name, description in tools:
        server.add_tool(_as_tool_error(_bind_kb(fn, kb)), name=name, description=description, annotations=READ_ONLY)
    server.add_tool(_as_tool_error(_list_kbs_tool(source)), name="list_kbs", annotations=READ_ONLY,
                    description="The caller's knowledge bases with their serving generation and file, node and "
                                "chunk counts.")
    _add_resources(server, source, kb)
    return server


async def _run(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on a worker thread (the stores' calls block)."""
    return await anyio.to_thread.run_sync(functools.partial(fn, *args))


def _search_tool(source: StateSource) -> Callable[..., Awaitable[SearchResponse]]:
    """The ``search`` tool: ranked places for a query, as the search endpoint returns them."""
    settings = source.settings

    async def search(
        kb: KbArg,
        query: Annotated[str, Field(min_length=1, max_length=2000, description="Words, a question or identifiers.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=200, description="How many hits.")] = 10,
        channel: Literal["all", "bm25", "vector", "smart"] = "all",
        path: Annotated[str | None, Field(max_length=500, description="Only paths matching this glob, e.g. 'src/**'.")] = None,
        lang: Annotated[str | None, Field(max_length=40, description="Only this language, e.g. 'python'.")] = None,
    ) -> SearchResponse:
        from sift.models import Filters
        from sift.retrievers.search import check_request

        text, _ = check_request(query, k, channel, "all")
        state = await source.get()
        filters = Filters(kb=kb, tenant=tenant_of(ctx, settings.tenant), path_glob=path, language=lang)
        # The search endpoint's service: its slots and threads (api/limits.py).
        result = await state.services.search.run(text, filters, k=k, channels=channel)
        return SearchResponse.model_validate(result.as_dict())

    return search


def _ask_tool(source: StateSource) -> Callable[..., Awaitable[Answer]]:
    """The ``ask`` tool: the chat endpoint's service, one answer (a thread id continues a conversation)."""
    settings = source.settings

    async def ask(
        kb: KbArg,
        question: Annotated[str, Field(max_length=MAX_QUESTION_CHARS, description="A question about the code or docs.")],
        ctx: Context,
        thread_id: Annotated[str | None, Field(description="Continue (or start) this conversation; follow-ups "
                                                           "resolve against its earlier turns.")] = None,
    ) -> Answer:
        from sift.api.schemas import ChatRequest
        from sift.graph.service import validate_question
        from sift.graph.threads import check_thread_id

        validate_question(question, kb)
        if thread_id is not None:
            check_thread_id(thread_id)
        state = await source.get()
        request = ChatRequest(kb=kb, message=question, thread_id=thread_id)
        return await state.services.chat.answer(tenant_of(ctx, settings.tenant), request)

    return ask


async def _run_docql(source: StateSource, kb: str, query: str, ctx: Context, limit: int = 50) -> DocqlResponse:
    """A DocQL query on ``kb``'s serving generation, for the caller's tenant."""
    from sift.retrievers.docql import execute, parse, resolve_kb

    parse(query)  # a syntax error is reported before anything opens
    state = await source.get()
    kb_id, generation = await _run(resolve_kb, state.engine, kb, tenant_of(ctx, source.settings.tenant))
    result = await _run(functools.partial(execute, limit=limit), state.engine, kb_id, generation, query)
    return DocqlResponse.model_validate(result)


def _docql_tool(source: StateSource) -> Callable[..., Awaitable[DocqlResponse]]:
    """The ``docql`` tool: any DocQL query."""

    async def docql(
        kb: KbArg,
        query: Annotated[str, Field(min_length=1, max_length=2000, description='A DocQL query, e.g. $.code.class("X").')],
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> DocqlResponse:
        return await _run_docql(source, kb, query, ctx, limit)

    return docql


def _find_tool(source: StateSource, function: str) -> Callable[..., Awaitable[DocqlResponse]]:
    """A ``find_*`` tool: DocQL's ``$.code.<function>("name")`` for a quoted name."""

    async def find(kb: KbArg, name: Name, ctx: Context) -> DocqlResponse:
        quoted = name.replace("\\", "\\\\").replace('"', '\\"')
        return await _run_docql(source, kb, f'$.code.{function}("{quoted}")', ctx, limit=100)

    return find


def _read_file_tool(source: StateSource) -> Callable[..., Awaitable[FileContent]]:
    """The ``read_file`` tool: exact stored lines, confined to the knowledge base."""
    settings = source.settings

    async def read_file(
        kb: KbArg,
        path: Annotated[str, Field(min_length=1, max_length=4096, description="Repository-relative path.")],
        ctx: Context,
        start_line: Annotated[int | None, Field(ge=1, description="First line (1-based).")] = None,
        end_line: Annotated[int | None, Field(ge=1, description="Last line (inclusive).")] = None,
    ) -> FileContent:
        from sift.retrievers.files import read_file_lines

        state = await source.get()
        lines = await _run(functools.partial(read_file_lines, tenant=tenant_of(ctx, settings.tenant)),
                           state.engine, kb, path, start_line, end_line)
        return FileContent(kb=kb, path=lines.path, start_line=lines.start_line, end_line=lines.end_line,
                           total_lines=lines.total_lines, lines=lines.lines)

    return read_file


def _list_kbs_tool(source: StateSource) -> Callable[..., Awaitable[KbList]]:
    """The ``list_kbs`` tool: the caller's knowledge bases."""

    async def list_kbs(ctx: Context) -> KbList:
        state = await source.get()
        kbs: KbList = await _run(state.services.kbs.list_kbs, tenant_of(ctx, source.settings.tenant))
        return kbs

    return list_kbs


def _add_resources(server: MCPServer, source: StateSource, kb: str | None) -> None:
    """``sift://KB`` (the file tree) and ``sift://KB/PATH`` (a file's stored text), and a prompt."""
    settings = source.settings

    @server.resource("sift://{kb}", name="file_tree", mime_type="text/plain",
                     description="The paths of a knowledge base's files, one a line.")
    async def file_tree(kb: str, ctx: Context) -> str:
        from sift.retrievers.docql import execute, resolve_kb

        state = await source.get()
        try:
            kb_id, generation = await anyio.to_thread.run_sync(resolve_kb, state.engine, kb,
                                                               tenant_of(ctx, settings.tenant))
            result = await anyio.to_thread.run_sync(functools.partial(execute, limit=100_000), state.engine, kb_id,
                                                    generation, "$.files")
        except SiftError as exc:
            raise ResourceError(exc.message) from exc
        return "\n".join(result["files"])

    @server.resource("sift://{kb}/{+path}", name="file", mime_type="text/plain",
                     description="The stored text of an ingested file.")
    async def file(kb: str, path: str, ctx: Context) -> str:
        from sift.retrievers.files import read_file_lines

        state = await source.get()
        try:
            lines = await anyio.to_thread.run_sync(functools.partial(
                read_file_lines, tenant=tenant_of(ctx, settings.tenant)), state.engine, kb, path)
        except SiftError as exc:
            raise ResourceError(exc.message) from exc
        return "\n".join(lines.lines) + "\n"

    def explain(name: str) -> str:
        return (f"Explain the codebase in the knowledge base {name!r}: what it is for, how it is laid out and which "
                f"parts matter most. Start from its file tree (the resource sift://{name}), the top headings "
                "(docql '$.toc[?(@.level == 1)]') and a search for its entry points; cite files and lines.")

    description = "Explain the project: its purpose, layout and main parts, with citations."
    if kb is not None:
        server.add_prompt(Prompt.from_function(lambda: explain(kb), name="explain_codebase", description=description))
    else:
        server.add_prompt(Prompt.from_function(explain, name="explain_codebase", description=description))
