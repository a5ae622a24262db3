"""The rows one parsed file adds to a batch of the store (``store.FileBatch``): its file version, its document
tree's nodes, its chunks with their content hashes, its entities and its call sites, linked to each other by
position until ``store.write_batch`` gives them ids.
"""

from __future__ import annotations

from typing import Any

from sift.catalog import KbRef
from sift.ingest import store
from sift.ingest.chunk import CHUNKING, content_hash
from sift.ingest.parse_worker import Parsed
from sift.ingest.walk import WalkedFile
from sift.languages import classify
from sift.models import DocumentTree
from sift.text import split_lines


def add_file(
    batch: store.FileBatch,
    parsed: Parsed,
    kb: KbRef,
    generation: int,
    wf: WalkedFile,
    summary: dict[str, Any],
) -> None:
    """Add the rows of one parsed file (its file version, nodes, chunks, entities and call sites) to ``batch``; a
    parse error goes to ``summary["failures"]``."""
    language, _ = classify(wf.path)
    tree, error, drafts = parsed
    if error:
        summary["failures"].append({"path": wf.path, "error": error})
    lines = split_lines(wf.text)
    st = tree.source_type.value
    batch.files.append(dict(
        kb_id=kb.id, gen_from=generation, gen_to=None, path=wf.path, language=language, source_type=st,
        content_hash=wf.content_hash, size_bytes=wf.size, line_count=len(lines), parser=tree.parser,
        parse_error=error, content=wf.text, chunking=CHUNKING,
    ))
    batch.nodes.append(node_rows(tree, kb))
    batch.chunks.append([
        dict(
            _node=d.node, kb_id=kb.id, tenant=kb.tenant, kind=d.kind.value, source_type=st, path=wf.path,
            language=language, name=d.name, symbol=d.symbol, part=d.part, module_code=d.module_code,
            heading_path=d.heading_path, start_line=d.start_line,
            end_line=d.end_line, public=kb.public, text=d.text,
            content_hash=content_hash(d.kind, wf.path, d.name, d.heading_path, d.text),
        )
        for d in drafts
    ])
    batch.entities.append([
        dict(_node=e.node, kb_id=kb.id, path=wf.path, type=e.type, name=e.name, detail=e.detail,
             start_line=e.start_line, end_line=e.end_line)
        for e in tree.entities
    ])
    names = [n.qualified_name.split("::", 1)[-1] for n in tree.nodes]
    batch.refs.append([
        dict(_caller=r.caller, kb_id=kb.id, path=wf.path,
             caller_name=names[r.caller] if r.caller else None, callee=r.callee,
             callee_name=r.callee.rsplit(".", 1)[-1], callee_qualified=r.callee_qualified, line=r.line,
             bound_locally=r.bound_locally)
        for r in tree.refs
    ])


def node_rows(tree: DocumentTree, kb: KbRef) -> list[dict[str, Any]]:
    """The node rows of a parsed file (``_index`` and ``_parent`` link them until the store gives them ids)."""
    st = tree.source_type.value
    return [
        dict(
            _index=n.index, _parent=n.parent, kb_id=kb.id, path=tree.path, language=tree.language, source_type=st,
            kind=str(n.kind), name=n.name, qualified_name=n.qualified_name, level=n.level,
            start_line=n.start_line, end_line=n.end_line, body_start_line=n.body_start_line,
            signature=n.signature, docstring=n.docstring, anchor=n.anchor, meta=n.meta or None,
        )
        for n in tree.nodes
    ]

