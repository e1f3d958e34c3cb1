"""The kit's lexical tokens: what BM25 and the lexical overlap measures count (pure).

One tokenizer for every BM25 in the kit -- the reference ranking of re-attribution
(:mod:`kit.guard.reattribute`), the on-disk corpus index (:mod:`kit.corpus.bm25`), the hard
negatives and construction pairs of verifier training -- so that the index and the reference
score the same words. Tokens are lower-cased runs of letters and digits (any script; ``_`` splits),
without a small English stop list.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was "
    "were which with".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without a small English stop list."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]
