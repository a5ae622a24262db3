"""Okapi BM25 as a precomputed sparse matrix: a query is the sum of a few rows.

The scores are exactly those of ``rank_bm25.BM25Okapi`` (rank-bm25 0.2.2, ``rank_bm25.py``): same idf with its
epsilon floor, same per-term formula evaluated in the same operation order, summed over the query tokens in the
same order, so results agree bit for bit. Each (term, document) score is computed once at build time and stored
in a term-major CSR matrix (the approach of ``bm25s``, Lù 2024, arXiv:2407.03618).
"""

from __future__ import annotations

import json
import math
import os
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

MATRIX_FILE = "bm25.npz"
FINISH_BLOCK = 1 << 20  # postings scored at a time by ``BM25Builder.finish``
VOCAB_FILE = "bm25.vocab.json"


def idf_okapi(n_docs: int, doc_freqs: Sequence[int], epsilon: float) -> np.ndarray:
    """Okapi idf ``log(N - n + 0.5) - log(n + 0.5)``; negative values become ``epsilon * mean idf``.

    Source: rank_bm25.BM25Okapi._calc_idf (the mean is over all terms, taken before flooring; summed in
    vocabulary order with ``math.log`` so the floor matches to the last bit).
    """
    idf = [math.log(n_docs - n + 0.5) - math.log(n + 0.5) for n in doc_freqs]
    if not idf:
        return np.zeros(0, dtype=np.float64)
    idf_sum = 0.0
    for value in idf:
        idf_sum += value
    eps = epsilon * (idf_sum / len(idf))
    out = np.asarray(idf, dtype=np.float64)
    out[out < 0] = eps
    return out


def idf_plus_one(n_docs: int, doc_freq: int) -> float:
    """Lucene's BM25 idf ``log(1 + (N - n + 0.5) / (n + 0.5))``: never negative, highest for an absent term.

    Source: Lucene ``BM25Similarity.idf``. Used to weigh question terms by how distinctive they are in a
    knowledge base (not for scoring, which keeps rank_bm25's ``idf_okapi``).
    """
    return math.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5) + 1.0)


def term_scores(
    tf: np.ndarray, doc_len: np.ndarray, avgdl: float, idf: np.ndarray, k1: float, b: float
) -> np.ndarray:
    """Per-(term, document) Okapi score ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``.

    Source: rank_bm25.BM25Okapi.get_scores, with the operations in the same order.
    """
    return idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * doc_len / avgdl)))


class BM25Builder:
    """Accumulates documents one at a time (no token lists are kept), then ``finish()`` builds the index."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self._vocab: dict[str, int] = {}
        self._ids = array("q")
        self._doc_len = array("q")
        self._terms = array("i")
        self._tfs = array("i")
        self._doc_of = array("i")

    def add(self, doc_id: int, tokens: Iterable[str]) -> None:
        """Add one document."""
        counts: dict[int, int] = {}
        vocab = self._vocab
        n = 0
        for tok in tokens:
            n += 1
            term = vocab.get(tok)
            if term is None:
                term = vocab[tok] = len(vocab)
            counts[term] = counts.get(term, 0) + 1
        pos = len(self._ids)
        self._ids.append(doc_id)
        self._doc_len.append(n)
        self._terms.extend(counts.keys())
        self._tfs.extend(counts.values())
        self._doc_of.extend([pos] * len(counts))

    def finish(self) -> BM25Index:
        """Compute every (term, document) score and return the index.

        The postings are put in term order once (a stable sort, so each term's documents stay in the order they
        were added) and scored ``FINISH_BLOCK`` at a time straight into the matrix's arrays: memory is the
        postings, their order and the result, not a dozen temporaries the size of the corpus.
        """
        n_docs, n_terms = len(self._ids), len(self._vocab)
        terms = np.frombuffer(self._terms, dtype=np.int32)
        doc_len = np.frombuffer(self._doc_len, dtype=np.int64)
        avgdl = int(doc_len.sum()) / n_docs if n_docs else 0.0
        counts = np.bincount(terms, minlength=n_terms)
        idf = idf_okapi(n_docs, counts.tolist(), self.epsilon)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        order = np.argsort(terms, kind="stable")
        indices = np.frombuffer(self._doc_of, dtype=np.int32)[order]
        tfs = np.frombuffer(self._tfs, dtype=np.int32)
        data = np.empty(len(order), dtype=np.float64)
        for lo in range(0, len(order), FINISH_BLOCK):
            at = order[lo : lo + FINISH_BLOCK]
            hi = lo + len(at)
            data[lo:hi] = term_scores(tfs[at].astype(np.int64), doc_len[indices[lo:hi]], avgdl, idf[terms[at]],
                                      self.k1, self.b)
        del order, terms, tfs
        matrix = sparse.csr_matrix((data, indices, indptr), shape=(n_terms, n_docs))
        params = {"k1": self.k1, "b": self.b, "epsilon": self.epsilon, "avgdl": avgdl}
        ids = np.frombuffer(self._ids, dtype=np.int64).copy()
        return BM25Index(ids, list(self._vocab), matrix, params, vocab=self._vocab)


class BM25Index:
    """Term-major CSR matrix of BM25 scores over documents ``ids`` (positions 0..n-1 in ``ids`` order)."""

    def __init__(self, ids: np.ndarray, terms: list[str], matrix: sparse.csr_matrix, params: dict,
                 vocab: dict[str, int] | None = None) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.terms = terms
        self.vocab = vocab if vocab is not None else {t: i for i, t in enumerate(terms)}  # term → row
        self.matrix = matrix
        self.params = params

    @classmethod
    def build(
        cls,
        ids: Sequence[int],
        token_lists: Iterable[Sequence[str]],
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ) -> BM25Index:
        """Index documents ``ids`` with their token lists."""
        builder = BM25Builder(k1, b, epsilon)
        for doc_id, tokens in zip(ids, token_lists, strict=True):
            builder.add(doc_id, tokens)
        return builder.finish()

    def __len__(self) -> int:
        return len(self.ids)

    def postings(self, term: str) -> np.ndarray:
        """Positions (in ``ids`` order) of the documents containing ``term``."""
        row = self.vocab.get(term)
        if row is None:
            return np.empty(0, dtype=np.int32)
        return self.matrix.indices[self.matrix.indptr[row] : self.matrix.indptr[row + 1]]

    def doc_freq(self, term: str) -> int:
        """How many documents contain ``term``."""
        row = self.vocab.get(term)
        return 0 if row is None else int(self.matrix.indptr[row + 1] - self.matrix.indptr[row])

    def mask_for(self, allowed_ids: Iterable[int]) -> np.ndarray:
        """Boolean mask over this index's documents that is True for the given ids."""
        return np.isin(self.ids, np.fromiter(allowed_ids, dtype=np.int64))

    def scores(self, query_tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Dense scores over all documents, and a mask of documents that contain at least one query term."""
        n = len(self.ids)
        scores = np.zeros(n, dtype=np.float64)
        matched = np.zeros(n, dtype=bool)
        indptr, indices, data = self.matrix.indptr, self.matrix.indices, self.matrix.data
        for tok in query_tokens:  # duplicates add twice, as in BM25Okapi.get_scores
            row = self.vocab.get(tok)
            if row is None:
                continue
            lo, hi = indptr[row], indptr[row + 1]
            cols = indices[lo:hi]
            scores[cols] += data[lo:hi]
            matched[cols] = True
        return scores, matched

    def _candidates(self, query_tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Positions of documents containing a query term, with their summed scores.

        The query terms' postings are concatenated and summed per document in one ``bincount``: over the whole
        corpus when they cover a large part of it, over their distinct documents otherwise. Either way each
        document's term scores are added in query order, so the floats equal ``scores``'s term-by-term sums.
        """
        indptr, indices, data = self.matrix.indptr, self.matrix.indices, self.matrix.data
        rows = [r for r in (self.vocab.get(t) for t in query_tokens) if r is not None]
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        idx = np.concatenate([indices[indptr[r] : indptr[r + 1]] for r in rows])
        vals = np.concatenate([data[indptr[r] : indptr[r + 1]] for r in rows]).astype(np.float64)
        if len(idx) * 8 > len(self.ids):
            sums = np.bincount(idx, weights=vals, minlength=len(self.ids))
            cand = np.flatnonzero(np.bincount(idx, minlength=len(self.ids)))
            return cand.astype(np.int64), sums[cand]
        unique = np.unique(idx, return_inverse=True)  # indexed, not unpacked: mypy 1.20 crashes on the unpacking
        cand, inverse = unique[0], unique[1]
        return cand.astype(np.int64), np.bincount(inverse, weights=vals, minlength=len(cand))

    def search(
        self, query_tokens: Sequence[str], k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (id, score) among allowed documents matching a query term; score desc, then id asc."""
        if k <= 0 or not len(self.ids):
            return []
        cand, cand_scores = self._candidates(query_tokens)
        if allowed is not None and len(cand):
            keep = allowed[cand]
            cand, cand_scores = cand[keep], cand_scores[keep]
        if not len(cand):
            return []
        if len(cand) > k:
            # Keep everything tied with the k-th best so the id tie-break is applied over all of them.
            kth = np.partition(cand_scores, len(cand) - k)[len(cand) - k]
            keep = cand_scores >= kth
            cand, cand_scores = cand[keep], cand_scores[keep]
        cand_ids = self.ids[cand]
        order = np.lexsort((cand_ids, -cand_scores))[:k]
        return [(int(cand_ids[i]), float(cand_scores[i])) for i in order]

    def save(self, directory: Path) -> None:
        """Write ``bm25.npz`` and ``bm25.vocab.json`` into ``directory`` (each via a temp name and a rename)."""
        directory.mkdir(parents=True, exist_ok=True)
        m = self.matrix
        tmp = directory / (MATRIX_FILE + ".tmp")
        with tmp.open("wb") as fh:
            np.savez(
                fh,
                ids=self.ids,
                indptr=m.indptr,
                indices=m.indices,
                data=m.data,
                shape=np.asarray(m.shape, dtype=np.int64),
                params=np.frombuffer(json.dumps(self.params).encode(), dtype=np.uint8),
            )
        os.replace(tmp, directory / MATRIX_FILE)
        tmp_vocab = directory / (VOCAB_FILE + ".tmp")
        tmp_vocab.write_text(json.dumps(self.terms, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp_vocab, directory / VOCAB_FILE)

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by ``save``."""
        with np.load(directory / MATRIX_FILE) as z:
            shape = tuple(int(x) for x in z["shape"])
            matrix = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
            params = json.loads(z["params"].tobytes().decode())
            ids = z["ids"]
        terms = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
        return cls(ids, terms, matrix, params)
