"""Re-attribution: propose a better source for a failed citation with BM25 (pure).

Seed 001, Appendix S4: re-attribution is a swappable commodity slot; a deterministic lexical
BM25 (recall@1 0.69 on QASA) matches the best open generator, but a lexical ranker cannot tell
support from contradiction, so the guard uses BM25 only to *propose* a candidate and the
verifier to *judge* it before any pointer moves (docs/architecture.md, "Citation guard").

BM25 here is rank-bm25's BM25Okapi (k1 = 1.5, b = 0.75) over :func:`kit.corpus.lexical.tokenize`
tokens, with one deviation: idf = ln(1 + (N - n + 0.5) / (n + 0.5)) (Lucene's form, always > 0)
instead of ln((N - n + 0.5) / (n + 0.5)) with an epsilon floor. Why: an answer cites only a handful of
passages, and with N = 2 or 3 documents the classic idf is 0 or negative for most terms, so
every candidate scores 0 and the "ranking" is the id order. Statistics (N, n, avgdl) are taken
over *all* the answer's passages, then the cited one is excluded from the ranking. Ties are
broken by passage id so the ranking is deterministic.
"""

from __future__ import annotations

import numpy as np

from kit.corpus.lexical import tokenize


def build_bm25(corpus: list[list[str]]) -> object:
    """A rank-bm25 ``BM25Okapi`` over tokenised ``corpus`` with Lucene's non-negative idf
    (see module doc): idf(w) = log(1 + (N - df + 0.5) / (df + 0.5))."""
    import math

    from rank_bm25 import BM25Okapi

    class _BM25(BM25Okapi):
        def _calc_idf(self, nd: dict[str, int]) -> None:
            for word, freq in nd.items():
                self.idf[word] = math.log(1.0 + (self.corpus_size - freq + 0.5) / (freq + 0.5))
            self.average_idf = sum(self.idf.values()) / max(1, len(self.idf))

    return _BM25(corpus)


def bm25_rank(
    query: str, passages: dict[str, str], exclude: set[str] | frozenset[str] = frozenset()
) -> list[tuple[str, float]]:
    """Passage ids (minus ``exclude`` and empty passages) ranked by BM25 score, best first."""
    every = sorted(pid for pid, text in passages.items() if tokenize(text))
    ids = [pid for pid in every if pid not in exclude]
    if not ids:
        return []
    q = tokenize(query)
    if not q:
        return [(pid, 0.0) for pid in ids]
    bm = build_bm25([tokenize(passages[pid]) for pid in every])
    all_scores = np.asarray(bm.get_scores(q), dtype=float)  # type: ignore[attr-defined]
    scores = {pid: float(all_scores[i]) for i, pid in enumerate(every)}
    return sorted(((pid, scores[pid]) for pid in ids), key=lambda t: (-t[1], t[0]))


def recall_at_1(queries: list[str], targets: list[str], pools: list[dict[str, str]]) -> np.ndarray:
    """Per query, 1 when BM25's top passage of its pool is the target passage (else 0)."""
    hits = []
    for q, g, pool in zip(queries, targets, pools, strict=True):
        ranked = bm25_rank(q, pool)
        hits.append(1 if ranked and ranked[0][0] == g else 0)
    return np.asarray(hits, dtype=int)
