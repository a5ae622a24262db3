"""The description that teaches DocQL to an LLM (tool docstring) and to people (``sift docql --help``)."""

from __future__ import annotations

DOCQL_TOOL_DESCRIPTION = """\
docql(query): run a DocQL query over the indexed code and docs. Deterministic; results are grouped by file with
exact 1-based line ranges you can cite. Narrow down like an engineer: table of contents → section → class → method.

Roots:
  $.toc        headings of the docs (fields: title/name, level, path, anchor, start_line, end_line, parent)
  $.content    doc sections with their text; functions heading("t"), h1("t") … h6("t") (case/punctuation-insensitive),
               grep("regex") or grep(/regex/i) (matching doc lines), codeblock[*] (code blocks in docs: lang, heading)
  $.code       code symbols (fields: name, qualified_name, kind/type, level, path, language, signature, docstring,
               parent, start_line, end_line); collections classes, functions, methods; functions class("Name"),
               function("name") (functions and methods), method("Cls.m") or method("m"), query("name") (any symbol),
               callers("name") (call sites of name), calls("name") (what name calls)
  $.files      files (path, language, source_type, line_count, size_bytes)
  $.entities   named things: classes, functions, HTTP endpoints, glossary terms (type, name, detail)
  $.structure  tree("dir/or/file") nested outline, flat("…") list outline; no argument = whole repository
Steps: [*] all, [0] first, [-1] last, [0:10] slice, [?( filter )]. End with .source/.content to include the text.
Filters: @.field == != > >= < <= value; ~= contains (case-insensitive); =~ /regex/flags (i, m, s);
  startsWith, endsWith; combine with && || ! and parentheses. Values: "text" or 'text', numbers, true, false, null.

Examples:
  $.toc[?(@.level == 1)]                                  top-level headings of every document
  $.toc[?(@.path startsWith "docs/" && @.title ~= "install")]
  $.content.heading("Authentication")                     a section and its body
  $.content.h2("Configuration")
  $.content.grep(/rotate.*secret/i)
  $.content.codeblock[?(@.lang == "python")]
  $.code.class("AuthService")                              class source with its file and lines
  $.code.method("AuthService.validate_token")
  $.code.functions[?(@.name startsWith "validate")]
  $.code.methods[?(@.parent == "AuthService")]
  $.code.callers("validate_token")                         where is it called?
  $.code.calls("login")                                    what does login call?
  $.entities[?(@.type == "endpoint" && @.name ~= "user")]
  $.files[?(@.language == "python")][0:20]
  $.structure.tree("src/pkg")
Results: {"type": "docql_result", "files": {path: [{"type", "name"/"text", "line", "start_line", "end_line",
"source"/"content"}]}, "total", "truncated", "deadline_exceeded"} (true when a grep stopped at its time limit).
A malformed query returns an error with the column and what was expected.
"""
