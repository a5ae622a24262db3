"""Building a generation's indexes from real SQLite rows with the real MiniLM model and real FAISS files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy import Engine, insert, update

from sift.catalog import index_dir_of
from sift.config import Settings
from sift.db import open_database
from sift.db.tables import Chunk, File, KnowledgeBase
from sift.embed import LocalEmbedder
from sift.errors import IndexNotReady
from sift.index.generation import load_indexes
from sift.ingest.chunk import content_hash
from sift.ingest.index import build_indexes
from sift.tokenize import tokenize

FUNCTIONS = {
    "validate_token": "def validate_token(self, token: str) -> bool:\n    \"\"\"Return True when the bearer token matches the secret.\"\"\"",
    "rotate_secret": "def rotate_secret(self) -> None:\n    \"\"\"Replace the shared secret with a fresh random one.\"\"\"",
    "render_page": "def render_page(page: Page) -> str:\n    \"\"\"Render a documentation page to HTML.\"\"\"",
    "parse_date": "def parse_date(text: str) -> date:\n    \"\"\"Parse an ISO 8601 date string.\"\"\"",
    "send_email": "def send_email(to: str, body: str) -> None:\n    \"\"\"Deliver an email message over SMTP.\"\"\"",
    "resize_image": "def resize_image(img: Image, width: int) -> Image:\n    \"\"\"Scale an image to the given width.\"\"\"",
    "hash_password": "def hash_password(pw: str) -> str:\n    \"\"\"Hash a password with bcrypt.\"\"\"",
    "load_config": "def load_config(path: Path) -> Config:\n    \"\"\"Read settings from a TOML file.\"\"\"",
}
DOCS = {
    "Installation": "Install the package with pip install tiny.",
    "Authentication": "Tokens are validated by AuthService.validate_token against the shared secret.",
    "Configuration": "Set SIFT_DATA_DIR to move the data directory.",
    "Deployment": "Run the service behind a reverse proxy such as nginx.",
}


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder()


def _add_file(engine: Engine, kb_id: int, path: str, gen: int, chunks: list[dict[str, Any]]) -> int:
    source_type = "doc" if path.endswith(".md") else "code"
    with engine.begin() as conn:
        file_id = conn.execute(
            insert(File).values(
                kb_id=kb_id, gen_from=gen, path=path, language="python" if source_type == "code" else "markdown",
                source_type=source_type, content_hash=f"{path}@{gen}", size_bytes=100, line_count=50,
                parser="test", content="",
            )
        ).inserted_primary_key[0]
        for i, c in enumerate(chunks):
            conn.execute(
                insert(Chunk).values(
                    kb_id=kb_id, tenant="default", file_id=file_id, kind=c["kind"], source_type=source_type,
                    path=path, language="python", name=c["name"], heading_path=c.get("heading_path"),
                    start_line=i * 5 + 1, end_line=i * 5 + 4,
                    content_hash=content_hash(c["kind"], path, c["name"], c.get("heading_path"), c["text"]),
                    text=c["text"],
                )
            )
    return int(file_id)


def _corpus(engine: Engine) -> tuple[int, dict[str, int]]:
    """A kb with two code files, one doc file; returns kb id and file ids by path."""
    with engine.begin() as conn:
        kb_id = conn.execute(insert(KnowledgeBase).values(name="tiny", root_path="/tiny")).inserted_primary_key[0]
    names = list(FUNCTIONS)
    files = {}
    for path, part in (("pkg/a.py", names[:4]), ("pkg/b.py", names[4:])):
        chunks = [{"kind": "file", "name": path, "text": f"{path}\n" + "\n".join(part)}]
        chunks += [{"kind": "function", "name": n, "text": FUNCTIONS[n]} for n in part]
        files[path] = _add_file(engine, kb_id, path, 1, chunks)
    doc_chunks = [{"kind": "file", "name": "docs/guide.md", "text": "docs/guide.md\n# Guide"}]
    doc_chunks += [
        {"kind": "doc", "name": h, "heading_path": f"Guide > {h}", "text": f"## {h}\n\n{t}"} for h, t in DOCS.items()
    ]
    files["docs/guide.md"] = _add_file(engine, kb_id, "docs/guide.md", 1, doc_chunks)
    return int(kb_id), files


def _chunk_id(engine: Engine, name: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(Chunk.__table__.select().where(Chunk.name == name)).first().id)


@pytest.fixture
def db(tmp_path: Path) -> tuple[Engine, int, dict[str, int]]:
    engine = open_database(Settings(data_dir=tmp_path / "data"))
    kb_id, files = _corpus(engine)
    return engine, kb_id, files


@pytest.fixture(scope="module")
def built(embedder: LocalEmbedder, tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, Path]:
    """One corpus indexed once, shared by the read-only tests."""
    root = tmp_path_factory.mktemp("built")
    engine = open_database(Settings(data_dir=root / "data"))
    kb_id, _ = _corpus(engine)
    build_indexes(engine, embedder, kb_id, 1, root / "g1")
    return engine, root / "g1"


def test_build_indexes_writes_a_complete_generation(
    db: tuple[Engine, int, dict[str, int]], embedder: LocalEmbedder, tmp_path: Path
) -> None:
    engine, kb_id, _ = db
    calls: list[tuple[str, int, int]] = []
    out = tmp_path / "idx" / "g1"
    stats = build_indexes(engine, embedder, kb_id, 1, out, progress=lambda *a: calls.append(a))
    assert stats["chunks"] == {"file": 3, "function": 8, "doc": 4}
    assert (stats["embedded"], stats["cached"], stats["reused"]) == (15, 0, 0)
    assert stats["embed_chunks_per_s"] > 0
    assert calls[-1] == ("index", 4, 4) and ("embed", 15, 15) in calls
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["file.faiss", "function.faiss", "doc.faiss", "function.windows.faiss", "doc.windows.faiss", "bm25.npz",
         "bm25.vocab.json", "manifest.json"]
    )
    assert stats["windows"] == {"count": 0, "embedded": 0, "cached": 0}  # every chunk fits in one window
    assert [p.name for p in out.parent.iterdir()] == ["g1"]  # no temp directory left behind
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model_id"] == "local:all-MiniLM-L6-v2" and manifest["dim"] == 384
    assert manifest["version"] == 2 and manifest["window_counts"] == {"function": 0, "doc": 0}
    assert len(manifest["chunk_ids"]["function"]) == 8


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("check that a bearer token is valid", "validate_token"),
        ("convert text into a calendar date", "parse_date"),
        ("deliver a message by mail", "send_email"),
        ("read settings file", "load_config"),
    ],
)
def test_build_indexes_nearest_function_is_right(
    built: tuple[Engine, Path], embedder: LocalEmbedder, query: str, expected: str
) -> None:
    engine, directory = built
    loaded = load_indexes(directory)
    (top_id, _), *_ = loaded.vectors["function"].search(embedder.embed_query(query), 3)
    assert top_id == _chunk_id(engine, expected)
    assert loaded.bm25.search(tokenize(expected), 1)[0][0] == _chunk_id(engine, expected)


def test_build_indexes_rebuild_embeds_nothing_new(
    db: tuple[Engine, int, dict[str, int]], embedder: LocalEmbedder, tmp_path: Path
) -> None:
    engine, kb_id, _ = db
    build_indexes(engine, embedder, kb_id, 1, tmp_path / "a")
    again = build_indexes(engine, embedder, kb_id, 1, tmp_path / "b")
    assert (again["embedded"], again["cached"], again["reused"]) == (0, 15, 0)
    reused = build_indexes(engine, embedder, kb_id, 1, tmp_path / "c", previous_dir=tmp_path / "a")
    assert (reused["embedded"], reused["cached"], reused["reused"]) == (0, 0, 15)
    a, c = load_indexes(tmp_path / "a"), load_indexes(tmp_path / "c")
    q = embedder.embed_query("hash a password")
    assert a.vectors["function"].search(q, 5) == c.vectors["function"].search(q, 5)


def test_build_indexes_next_generation_sees_only_visible_files(
    db: tuple[Engine, int, dict[str, int]], embedder: LocalEmbedder, tmp_path: Path
) -> None:
    engine, kb_id, files = db
    build_indexes(engine, embedder, kb_id, 1, tmp_path / "g1")
    # generation 2: pkg/b.py deleted, pkg/a.py replaced by a version with one changed function
    with engine.begin() as conn:
        conn.execute(update(File).where(File.id.in_([files["pkg/b.py"], files["pkg/a.py"]])).values(gen_to=2))
    names = list(FUNCTIONS)[:4]
    chunks = [{"kind": "file", "name": "pkg/a.py", "text": "pkg/a.py\n" + "\n".join(names)}]
    chunks += [{"kind": "function", "name": n, "text": FUNCTIONS[n]} for n in names[1:]]
    chunks.append({"kind": "function", "name": "verify_signature", "text": "def verify_signature(sig): ..."})
    _add_file(engine, kb_id, "pkg/a.py", 2, chunks)
    stats = build_indexes(engine, embedder, kb_id, 2, tmp_path / "g2", previous_dir=tmp_path / "g1")
    assert stats["chunks"] == {"file": 2, "function": 4, "doc": 4}
    assert stats["embedded"] == 1  # only verify_signature's text is new
    loaded = load_indexes(tmp_path / "g2")
    with engine.connect() as conn:
        gone = {r.id for r in conn.execute(Chunk.__table__.select().where(Chunk.file_id == files["pkg/b.py"]))}
    for index in loaded.vectors.values():
        assert not gone & set(index.ids.tolist())
    assert not gone & set(loaded.bm25.ids.tolist())
    hits = loaded.bm25.search(tokenize("send_email"), 5)
    assert hits == []
    assert np.array_equal(np.sort(loaded.bm25.ids), np.sort(np.concatenate([v.ids for v in loaded.vectors.values()])))


def test_load_indexes_refuses_a_partial_directory(tmp_path: Path) -> None:
    (tmp_path / "g3").mkdir()
    (tmp_path / "g3" / "file.faiss").write_bytes(b"")
    with pytest.raises(IndexNotReady):
        load_indexes(tmp_path / "g3")


def test_build_indexes_through_the_ingest_pipeline(tiny_repo: Path, embedder: LocalEmbedder, tmp_path: Path) -> None:
    from sift.ingest.pipeline import ingest

    settings = Settings(data_dir=tmp_path / "data")
    first = ingest(settings, tiny_repo, "tiny", embedder=embedder)["index"]
    assert first["embedded"] == first["chunks_total"] > 0
    engine = open_database(settings)
    with engine.connect() as conn:
        names = {r.id: r.name for r in conn.execute(Chunk.__table__.select())}
        (index_path,) = conn.execute(Chunk.__table__.metadata.tables["generations"].select()).fetchall()[-1:]
    loaded = load_indexes(index_dir_of(settings.resolved_index_dir(), index_path.kb_id, index_path.number,
                                       index_path.index_path))
    (top, _), *_ = loaded.vectors["function"].search(embedder.embed_query("check that a token is valid"), 1)
    assert names[top] == "AuthService.validate_token"
    auth = tiny_repo / "pkg" / "auth.py"
    auth.write_text(auth.read_text().replace("Log a user in", "Sign a user in"))
    second = ingest(settings, tiny_repo, "tiny", embedder=embedder)["index"]
    assert second["embedded"] == 2  # the changed function and its file chunk; nothing else
    assert second["embedded"] + second["cached"] + second["reused"] == second["chunks_total"]


LONG_SECTION = "\n".join([
    "## Operations",
    "",
    *[f"The service writes a line to the access log for request number {i} and rotates the log daily." for i in range(8)],
    "",
    "Backups of the database are taken every night at two o'clock and kept for thirty days on a separate disk.",
])


def test_windows_find_a_passage_deep_in_a_long_chunk(embedder: LocalEmbedder, tmp_path: Path) -> None:
    engine = open_database(Settings(data_dir=tmp_path / "data"))
    kb_id, _ = _corpus(engine)
    _add_file(engine, kb_id, "docs/ops.md", 1, [
        {"kind": "doc", "name": "Operations", "heading_path": "Ops > Operations", "text": LONG_SECTION}])
    stats = build_indexes(engine, embedder, kb_id, 1, tmp_path / "g1")
    assert stats["windows"]["count"] >= 2 and stats["windows"]["embedded"] == stats["windows"]["count"]
    loaded = load_indexes(tmp_path / "g1")
    ops = _chunk_id(engine, "Operations")
    assert set(loaded.windows["doc"].ids.tolist()) == {ops}
    q = embedder.embed_query("how long are nightly database backups kept")
    window_score = max(score for cid, score in loaded.windows["doc"].search(q, 10) if cid == ops)
    own_score = dict(loaded.vectors["doc"].search(q, 10))[ops]
    assert window_score > own_score + 0.05  # the last window says it; the whole section's vector is mostly logs
    again = build_indexes(engine, embedder, kb_id, 1, tmp_path / "g2")
    assert again["windows"]["embedded"] == 0 and again["windows"]["cached"] == stats["windows"]["count"]


def test_an_index_of_the_older_layout_is_built_again(tiny_repo: Path, embedder: LocalEmbedder, tmp_path: Path) -> None:
    from sift.ingest.pipeline import ingest

    settings = Settings(data_dir=tmp_path / "data")
    first = ingest(settings, tiny_repo, "tiny", embedder=embedder)
    engine = open_database(settings)
    generations = Chunk.__table__.metadata.tables["generations"]
    with engine.connect() as conn:
        row = conn.execute(generations.select().where(generations.c.number == first["generation"])).one()
    path = index_dir_of(settings.resolved_index_dir(), row.kb_id, row.number, row.index_path)
    manifest = json.loads((path / "manifest.json").read_text())
    (path / "manifest.json").write_text(json.dumps({**manifest, "version": 1}))  # as built before windows
    second = ingest(settings, tiny_repo, "tiny", embedder=embedder)
    assert second["status"] == "published" and second["generation"] == first["generation"] + 1
    assert second["index"]["embedded"] == 0  # every vector reused
    assert ingest(settings, tiny_repo, "tiny", embedder=embedder)["status"] == "unchanged"


class HashEncoder:
    """Deterministic unit vectors seeded by each text's hash: whatever the batches, a text gets the same vector."""

    model_id = "test-hash"
    dim = 384

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        import hashlib

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest())
            out[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _reference_files(engine: Engine, encoder: HashEncoder, out: Path) -> None:
    """Every vector index of generation 1 built at once from all its vectors, in chunk id order."""
    from sift.index.generation import KINDS, vector_file, window_file
    from sift.index.vector import VectorIndex
    from sift.ingest.chunk import WINDOW_KINDS, embedding_text, window_texts
    from sift.models import index_level

    rows = {k: ([], []) for k in KINDS}  # type: dict[str, tuple[list[int], list[str]]]
    windows = {k: ([], []) for k in WINDOW_KINDS}  # type: dict[str, tuple[list[int], list[str]]]
    with engine.connect() as conn:
        for r in conn.execute(Chunk.__table__.select().order_by(Chunk.id)):
            rows[index_level(r.kind)][0].append(r.id)
            rows[index_level(r.kind)][1].append(embedding_text(r.kind, r.path, r.name, r.heading_path, r.text))
            for text in window_texts(r.kind, r.path, r.name, r.text):
                windows[r.kind][0].append(r.id)
                windows[r.kind][1].append(text)
    out.mkdir()
    for files, where in ((rows, vector_file), (windows, window_file)):
        for kind, (ids, texts) in files.items():
            vectors = encoder.embed_documents(texts) if texts else np.zeros((0, encoder.dim), np.float32)
            VectorIndex.build(ids, vectors, dim=encoder.dim).save(where(out, kind))


def test_batched_build_writes_the_indexes_of_all_vectors_at_once(tmp_path: Path) -> None:
    """Vectors spooled batch by batch and indexes made from the spools: the same files, byte for byte, as indexes
    built at once from every vector; the BM25 index is the keyword-only generation's (linked, not built again)
    when it holds exactly these chunks, and built when it does not."""
    from sift.index.bm25 import BM25Index
    from sift.ingest.index import build_keyword_index

    engine = open_database(Settings(data_dir=tmp_path / "data"))
    kb_id, _ = _corpus(engine)
    _add_file(engine, kb_id, "docs/ops.md", 1, [
        {"kind": "doc", "name": "Operations", "heading_path": "Ops > Operations", "text": LONG_SECTION}])
    encoder = HashEncoder()
    _reference_files(engine, encoder, tmp_path / "ref")
    build_keyword_index(engine, kb_id, 1, tmp_path / "kw")
    stats = build_indexes(engine, encoder, kb_id, 1, tmp_path / "g1", keyword_dir=tmp_path / "kw",  # type: ignore[arg-type]
                          batch_size=4)
    assert stats["windows"]["count"] >= 2
    for ref in sorted((tmp_path / "ref").iterdir()):
        assert (tmp_path / "g1" / ref.name).read_bytes() == ref.read_bytes(), ref.name
    assert (tmp_path / "g1" / "bm25.npz").stat().st_ino == (tmp_path / "kw" / "bm25.npz").stat().st_ino
    assert not [p for p in (tmp_path / "g1").iterdir() if p.suffix in (".ids", ".vectors")]  # no spool left
    load_indexes(tmp_path / "g1")  # its manifest lists every file it holds
    # A keyword index of other chunks (one file less) is not taken: the BM25 index is built for these.
    with engine.begin() as conn:
        conn.execute(update(File).where(File.path == "docs/ops.md").values(gen_to=2))
    build_indexes(engine, encoder, kb_id, 2, tmp_path / "g2", keyword_dir=tmp_path / "kw")  # type: ignore[arg-type]
    build_keyword_index(engine, kb_id, 2, tmp_path / "kw2")
    built, expected = BM25Index.load(tmp_path / "g2"), BM25Index.load(tmp_path / "kw2")
    assert (tmp_path / "g2" / "bm25.npz").stat().st_ino != (tmp_path / "kw" / "bm25.npz").stat().st_ino
    assert np.array_equal(built.ids, expected.ids) and built.terms == expected.terms
    assert (built.matrix != expected.matrix).nnz == 0
