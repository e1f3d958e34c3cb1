"""Stage: re-attribution suggestions for citations the conformal rule flags (docs/architecture.md,
"Citation guard") -- BM25 (:mod:`kit.guard.reattribute`'s Lucene-idf BM25, served by
:mod:`kit.corpus.bm25`) over the whole corpus proposes the best other paper for the claim; the
verifier judges it; a suggestion is made only when it scores above tau. Nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from kit.core.errors import check_param
from kit.corpus.lexical import tokenize
from kit.guard.verifiers.support import SupportScorer


@dataclass(frozen=True)
class CorpusIndex:
    """BM25 (Lucene idf; the formula of :mod:`kit.guard.reattribute`) over every corpus paper,
    built once as a :class:`kit.corpus.bm25.BM25Index` (scores identical to the rank-bm25
    reference, tests/corpus/test_corpus_bm25.py; a query reads only its terms' postings)."""

    ids: tuple[str, ...]
    index: Any = field(hash=False, compare=False)

    @classmethod
    def build(cls, texts: Mapping[str, str]) -> CorpusIndex:
        from kit.corpus.bm25 import BM25Index

        ids = tuple(sorted(k for k, v in texts.items() if tokenize(v)))
        check_param("texts", len(ids), len(ids) >= 1, "at least one non-empty text", "CorpusIndex")
        return cls(ids, BM25Index.build((i, texts[i]) for i in ids))

    def best_other(self, query: str, exclude: str) -> str | None:
        """The top-ranked paper other than ``exclude`` (ties -> smallest id), or None."""
        if not tokenize(query):
            return None
        top = self.index.top(query, 1, exclude=[exclude])
        return top[0][0] if top else None


def suggest_reattribution(
    flagged: pd.DataFrame,
    index: CorpusIndex,
    texts: Mapping[str, str],
    scorer: SupportScorer,
    tau: float,
    label: Callable[[str], str] = lambda v: f"PMID:{v}",
) -> pd.DataFrame:
    """For each citation flagged by the conformal rule: BM25's best other corpus paper
    (``candidate``), its verifier score (``candidate_score``) and ``suggested`` = the candidate's
    label when it scores above tau (the pointer may move), else ''. Never deletes a citation."""
    out = flagged.copy()
    out["candidate"] = ""
    out["candidate_score"] = np.nan
    out["suggested"] = ""
    rows = np.flatnonzero((out["flag_reason"] == "score_at_or_below_tau").to_numpy())
    cands: list[tuple[int, str]] = []
    for i in rows:
        c = index.best_other(str(out["claim"].iat[i]), str(out["value"].iat[i]))
        if c is not None:
            cands.append((int(i), c))
    if cands:
        s = scorer.score([str(out["claim"].iat[i]) for i, _ in cands], [texts[c] for _, c in cands])
        cc, cs, cg = (out.columns.get_loc(k) for k in ("candidate", "candidate_score", "suggested"))
        for (i, c), v in zip(cands, s, strict=True):
            out.iat[i, cc] = label(c)
            out.iat[i, cs] = float(v)
            out.iat[i, cg] = label(c) if float(v) > tau else ""
    return out
