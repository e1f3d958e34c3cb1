"""The on-disk BM25 index (bm25s) against the reference rank-bm25 (same tokens, same formula)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kit.corpus.bm25 import BM25Index
from kit.corpus.catalog import pubmedqa_from_registry
from kit.corpus.lexical import tokenize
from kit.corpus.synthetic import synthetic_records
from kit.guard.reattribute import build_bm25


def _reference_top(ref: object, ids: list[str], query: str, k: int) -> list[tuple[str, float]]:
    s = np.asarray(ref.get_scores(tokenize(query)), dtype=float)  # type: ignore[attr-defined]
    order = sorted(range(len(ids)), key=lambda i: (-s[i], ids[i]))[:k]
    return [(ids[i], float(s[i])) for i in order]


def _check(docs: list[tuple[str, str]], queries: list[str], tmp_path: Path) -> None:
    ids = [d for d, _ in docs]
    ref = build_bm25([tokenize(t) for _, t in docs])
    BM25Index.build(docs).save(tmp_path / "bm25")
    index = BM25Index.open(tmp_path / "bm25")  # memory-mapped from disk
    for q in queries:
        got, want = index.top(q, 10), _reference_top(ref, ids, q, 10)
        assert [d for d, _ in got] == [d for d, _ in want], q
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-6), q
        full = np.asarray(ref.get_scores(tokenize(q)), dtype=float)  # type: ignore[attr-defined]
        assert np.max(np.abs(index.scores(q) - full)) <= 1e-6


def test_identical_to_rank_bm25_on_synthetic_text(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    recs = list(synthetic_records(1, 3000, rng, words=40))
    docs = sorted((f"PMID:{r.pmid}", f"{r.title} {r.abstract[0][1]}") for r in recs)
    qrng = np.random.default_rng(8)
    queries = [" ".join(qrng.choice(tokenize(docs[i][1]), size=4)) for i in range(0, 3000, 150)]
    queries += ["synthetic synthetic", "absent-term-xyz", "", docs[5][1]]
    _check(docs, queries, tmp_path)


def test_identical_to_rank_bm25_on_pubmedqa(registry_raw: Path, tmp_path: Path) -> None:
    corpus = pubmedqa_from_registry(registry_raw)
    docs = sorted(corpus.documents.items())
    queries = [t[:120] for _, t in docs[::97]] + ["aspirin stroke prevention", "the of and"]
    _check(docs, queries, tmp_path)


def test_ties_exclusion_and_empty() -> None:
    docs = [("b", "same words here"), ("a", "same words here"), ("c", "other text")]
    index = BM25Index.build(docs)
    top = index.top("same words", 3)
    assert [d for d, _ in top] == ["a", "b", "c"] and top[0][1] == top[1][1] > top[2][1] == 0.0
    assert [d for d, _ in index.top("same", 1, exclude=["a"])] == ["b"]
    assert index.top("", 2) == [("a", 0.0), ("b", 0.0)]
    with pytest.raises(Exception, match="nothing to index"):
        BM25Index.build([])
