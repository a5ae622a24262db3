"""DocQL: a JSONPath-like query language over the document trees of code and docs.

``parse(query)`` checks syntax and names; ``execute(engine, kb_id, generation, query, limit=50)`` runs it as
parameterised SQL (plus time-bounded regexes in Python) and returns a ``docql_result`` grouped by file.
"""

from __future__ import annotations

from sift.retrievers.docql.ast import Query
from sift.retrievers.docql.channel import DocQLChannel, make_docql_tool, resolve_kb, result_hits
from sift.retrievers.docql.describe import DOCQL_TOOL_DESCRIPTION
from sift.retrievers.docql.executor import DEFAULT_LIMIT, execute
from sift.retrievers.docql.parser import parse

__all__ = [
    "DEFAULT_LIMIT",
    "DOCQL_TOOL_DESCRIPTION",
    "DocQLChannel",
    "Query",
    "execute",
    "make_docql_tool",
    "parse",
    "resolve_kb",
    "result_hits",
]
