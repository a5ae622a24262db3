"""SQL of the PostgreSQL search channels: the Okapi BM25 query, the smart matcher's counts, and filters.

User input never enters the SQL text: terms, globs and vectors are bound parameters; only integers the server
resolved (knowledge base id, vector width) are written into the HNSW query as literals, which the planner needs
to match the partial index.
"""

from __future__ import annotations

from typing import Any

from sift.db.search_schema import HIDDEN_FILES, VISIBLE
from sift.models import Filters

# Okapi BM25 (sift.index.bm25.term_scores: idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))), in that
# operation order), summed per chunk over the query's tokens in query order (a repeated token adds again), as
# BM25Index._candidates does: floats added in another order differ in the last bit and would break exact ties.
# idf is rank_bm25's, negative values floored at epsilon × mean idf (sift.index.bm25.idf_okapi), computed once per
# query term (OFFSET 0 keeps the planner from inlining the two logarithms into every posting). Ties: chunk id.
BM25_SQL = """
SELECT s.chunk_id, s.score, {hit_cols} FROM (
  SELECT p.chunk_id,
         sum(t.idf * (p.tf * (:k1 + 1) / (p.tf + :k1 * (1 - :b + :b * p.doc_len / :avgdl))) ORDER BY q.ord) AS score
  FROM unnest(CAST(:terms AS text[])) WITH ORDINALITY AS q(term, ord)
  JOIN LATERAL (SELECT CASE WHEN w.idf < 0 THEN :floor ELSE w.idf END AS idf FROM (
                  SELECT ln(:n - st.df + 0.5::float8) - ln(st.df + 0.5::float8) AS idf FROM search_terms st
                  WHERE st.kb_id = :kb AND st.generation = :gen AND st.term = q.term
                  OFFSET 0) w) t ON true
  JOIN search_postings p ON p.kb_id = :kb AND p.term = q.term {files_join}
  WHERE {visible}
  GROUP BY p.chunk_id
  ORDER BY score DESC, p.chunk_id
  LIMIT :k
) s JOIN chunks c ON c.id = s.chunk_id
ORDER BY s.score DESC, s.chunk_id
"""

# Smart matching (retrievers.smart.SmartMatcher): a query form matches a chunk's content (a posting) or its name
# with its level's weight; per (chunk, term) the best match at each level counts; per chunk the number of terms
# matched and their summed scores at levels 1, 2 and 3. per_chunk is materialised once and read twice: for the
# plan (from its histogram of (m1, m2, m3) triples) and for the top rows at that plan.
_SMART_MATCHES = """
WITH qf AS (
  SELECT * FROM unnest(CAST(:ti AS int[]), CAST(:forms AS text[]), CAST(:levels AS int[]),
                       CAST(:cw AS float8[]), CAST(:nw AS float8[])) AS x(ti, form, lvl, cw, nw)
), m AS (
  SELECT p.chunk_id, qf.ti, qf.lvl, qf.cw AS s FROM qf
    JOIN search_postings p ON p.kb_id = :kb AND p.term = qf.form {content_join}
    WHERE {content_visible}
  UNION ALL
  SELECT n.chunk_id, qf.ti, qf.lvl, qf.nw AS s FROM qf
    JOIN search_names n ON n.kb_id = :kb AND n.term = qf.form {name_join}
    WHERE {name_visible}
), t AS (
  SELECT chunk_id, ti, max(s) FILTER (WHERE lvl = 1) AS s1, max(s) FILTER (WHERE lvl <= 2) AS s2, max(s) AS s3
  FROM m GROUP BY chunk_id, ti
), per_chunk AS MATERIALIZED (
  SELECT chunk_id, count(s1) AS m1, count(s2) AS m2, count(s3) AS m3,
         sum(s1 ORDER BY ti) AS t1, sum(s2 ORDER BY ti) AS t2, sum(s3 ORDER BY ti) AS t3
  FROM t GROUP BY chunk_id
), hist AS (
  SELECT m1, m2, m3, count(*) AS n FROM per_chunk GROUP BY m1, m2, m3
)
"""
# SmartMatcher.search's stopping rule on the histogram ``hist(m1, m2, m3, n)``: the first plan (level, required) of
# :plan_levels/:plan_required (``smart_plans``) with at least :k chunks, else the last; then one term more when
# that plan has over :too_many × :k chunks and requiring one more still leaves :k. One row: plan(lvl, req).
SMART_PLAN = """
, plans AS (
  SELECT p.ord, p.lvl, p.req,
         (SELECT coalesce(sum(h.n), 0) FROM hist h
          WHERE CASE p.lvl WHEN 1 THEN h.m1 WHEN 2 THEN h.m2 ELSE h.m3 END >= p.req) AS n,
         (SELECT coalesce(sum(h.n), 0) FROM hist h
          WHERE CASE p.lvl WHEN 1 THEN h.m1 WHEN 2 THEN h.m2 ELSE h.m3 END >= p.req + 1) AS n_stricter
  FROM unnest(CAST(:plan_levels AS int[]), CAST(:plan_required AS int[])) WITH ORDINALITY AS p(lvl, req, ord)
), chosen AS (
  SELECT * FROM plans
  WHERE ord = coalesce((SELECT min(ord) FROM plans WHERE n >= :k), (SELECT max(ord) FROM plans))
), plan AS (
  SELECT lvl, CASE WHEN n > :too_many * :k AND req < :n_terms AND n_stricter >= :k THEN req + 1 ELSE req END AS req
  FROM chosen
)
"""
# The top rows at the plan, with the plan itself on every row (one row of NULLs when nothing matched). Term scores
# are summed in term order, as SmartMatcher sums its rows, so equal scores are equal to the bit.
_SMART_TOP = """
SELECT plan.lvl AS level, plan.req AS required, x.chunk_id, x.score, {hit_cols} FROM plan
LEFT JOIN LATERAL (
  SELECT chunk_id, CASE plan.lvl WHEN 1 THEN t1 WHEN 2 THEN t2 ELSE t3 END AS score FROM per_chunk
  WHERE CASE plan.lvl WHEN 1 THEN m1 WHEN 2 THEN m2 ELSE m3 END >= plan.req
  ORDER BY score DESC, chunk_id
  LIMIT :k
) x ON true
LEFT JOIN chunks c ON c.id = x.chunk_id
ORDER BY x.score DESC, x.chunk_id
"""


def smart_sql(filters: Filters, hit_cols: str) -> tuple[str, dict[str, Any]]:
    """The smart matcher's plan and top chunks in one statement, with the filters applied."""
    content_join, content_visible, params = allowed_rows(filters, "p")
    name_join, name_visible, _ = allowed_rows(filters, "n")
    head = _SMART_MATCHES.format(content_join=content_join, content_visible=content_visible, name_join=name_join,
                                 name_visible=name_visible)
    return head + SMART_PLAN + _SMART_TOP.format(hit_cols=hit_cols), params


def bm25_sql(filters: Filters, hit_cols: str) -> tuple[str, dict[str, Any]]:
    """The BM25 query over the postings, with the filters applied."""
    files_join, visible, params = allowed_rows(filters, "p")
    return BM25_SQL.format(files_join=files_join, visible=visible, hit_cols=hit_cols), params


def allowed_rows(filters: Filters, alias: str) -> tuple[str, str, dict[str, Any]]:
    """(JOIN of files, WHERE condition, parameters) keeping the rows of table ``alias`` (chunk_id, file_id, kb_id
    already equal to ``:kb``) that are visible in ``:gen`` and pass the filters.

    Without a filter on files' columns, no row's file is looked up: visibility excludes the generation's hidden
    file versions (``HIDDEN_FILES``, hashed once), which at a million postings saves a million index probes. They
    go through an array so that the planner always hashes them: it hashes a ``NOT IN`` subquery only when its
    row estimate fits in ``work_mem``, and otherwise rescans the subquery for every row (seconds, with a few
    thousand hidden files and a small ``work_mem``); an unnested array is estimated at 10 rows.
    """
    where, params = filter_sql(filters, f"{alias}.chunk_id")
    if filters.source_type is not None or filters.language or filters.path_glob:
        return f"JOIN files f ON f.id = {alias}.file_id", VISIBLE + where, params
    return "", f"{alias}.file_id NOT IN (SELECT unnest(ARRAY({HIDDEN_FILES}))){where}", params


def filter_sql(filters: Filters, chunk_col: str) -> tuple[str, dict[str, Any]]:
    """`` AND …`` conditions on files alias ``f`` (and ``chunk_col`` for public) with their bound parameters.

    The knowledge base (and so the tenant) is applied by every query through ``:kb``; these are the rest of
    ``Filters``, with the same meaning as ``retrievers.base.ChunkTable.mask``.
    """
    parts: list[str] = []
    params: dict[str, Any] = {}
    if filters.source_type is not None:
        parts.append("f.source_type = :f_source_type")
        params["f_source_type"] = str(filters.source_type)
    if filters.language:
        parts.append("f.language = :f_language")
        params["f_language"] = filters.language
    if filters.public_only:
        parts.append(f"EXISTS (SELECT 1 FROM chunks pc WHERE pc.id = {chunk_col} AND pc.public)")
    if filters.path_glob:
        sql, glob_params = glob_sql(filters.path_glob, "f.path")
        parts.append(sql)
        params.update(glob_params)
    return "".join(f" AND {p}" for p in parts), params


def glob_sql(pattern: str, column: str) -> tuple[str, dict[str, Any]]:
    """``retrievers.base._glob_match`` as a SQL condition on ``column``: POSIX regexes and a prefix, all bound."""
    alts = [f"{column} ~ :f_glob0"]
    params: dict[str, Any] = {"f_glob0": "^" + glob_regex(pattern) + "$"}
    if "/" not in pattern:  # a bare name matches the last path segment
        alts.append(f"{column} ~ :f_glob1")
        params["f_glob1"] = "(^|/)" + glob_regex(pattern, segment=True) + "$"
    if pattern.endswith("/") or not any(ch in pattern for ch in "*?["):  # a directory matches its subtree
        alts.append(f"starts_with({column}, :f_glob2)")
        params["f_glob2"] = pattern.rstrip("/") + "/"
    if "**" in pattern:
        alts.append(f"{column} ~ :f_glob3")
        params["f_glob3"] = "^" + glob_regex(pattern.replace("**/", "*").replace("**", "*")) + "$"
    return "(" + " OR ".join(alts) + ")", params


def glob_regex(pattern: str, segment: bool = False) -> str:
    """An fnmatch pattern as a PostgreSQL (ARE) regex body: ``*`` any run, ``?`` one character, ``[…]`` a set.

    ``segment=True`` keeps every wildcard inside one path segment (for matching a file's base name). Every other
    character is escaped, so nothing in a pattern is a regex operator.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        i += 1
        if ch == "*":
            out.append("[^/]*" if segment else ".*")
        elif ch == "?":
            out.append("[^/]" if segment else ".")
        elif ch == "[":
            j = i
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:  # no closing bracket: fnmatch takes "[" literally
                out.append("\\[")
                continue
            body = pattern[i:j]
            i = j + 1
            negate = body.startswith("!")
            if negate:
                body = body[1:]
            chars = "".join(c if c.isalnum() or c == "-" else "\\" + c for c in body)
            out.append(f"[{'^' if negate else ''}{chars}{'/' if negate and segment else ''}]")
        else:
            out.append(ch if ch.isalnum() else "\\" + ch)
    return "".join(out)
