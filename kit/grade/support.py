"""Support scorers for L2 and must_ground: anything with ``score(claims, passages) -> [0, 1]``.

The interface is the citation guard's :class:`kit.guard.verifiers.support.SupportScorer` (the
``score`` of its :class:`kit.guard.verifiers.card.Verifier` protocol), so the guard's verifiers
plug in unchanged (``name`` is taken from their card). The built-in instrument here is
:class:`LexicalSupport`, a transparent IDF-weighted token-coverage score:

    s(claim, passage) = sum_{t in C ∩ P} idf(t) / sum_{t in C} idf(t),
    idf(t) = ln((N + 1) / (df(t) + 0.5)),

with C, P the content-token sets (kit.grade.text) of the claim and the passage, and df, N the
document frequencies of a reference corpus (the PubMedQA abstracts in the planted audit). A claim
with no content token scores 0. It measures lexical grounding, not entailment: a negated
conclusion copied from the right abstract scores high. That limit is stated wherever it is used.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from kit.grade.text import content_set, doc_freq

LEXICAL_RULE = "s = sum idf(C∩P) / sum idf(C); idf = ln((N+1)/(df+0.5)); content tokens"


@dataclass(frozen=True)
class LexicalSupport:
    """IDF-weighted coverage of the claim's content tokens by the passage (see module doc)."""

    df: Mapping[str, int] = field(hash=False)
    n_docs: int
    name: str = "lexical-idf-coverage"

    @classmethod
    def from_corpus(cls, docs: Iterable[str]) -> LexicalSupport:
        df, n = doc_freq(docs)
        return cls(df, n)

    def idf(self, tok: str) -> float:
        return math.log((self.n_docs + 1) / (self.df.get(tok, 0) + 0.5))

    def score(self, claims: Sequence[str], passages: Sequence[str]) -> np.ndarray:
        if len(claims) != len(passages):
            from kit.core.errors import ConfigError

            raise ConfigError("bad_parameter", "claims and passages must have the same length")
        cache: dict[str, frozenset[str]] = {}
        out = np.zeros(len(claims), dtype=float)
        for i, (c, p) in enumerate(zip(claims, passages, strict=True)):
            ctoks = content_set(c)
            if not ctoks or not p:
                continue
            if p not in cache:
                cache[p] = content_set(p)
            ptoks = cache[p]
            w = {t: self.idf(t) for t in ctoks}
            den = sum(w.values())
            out[i] = sum(v for t, v in w.items() if t in ptoks) / den if den > 0 else 0.0
        return out
