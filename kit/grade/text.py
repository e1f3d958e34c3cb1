"""Text primitives for the lexical instruments of kit.grade (pure).

Tokens are lower-cased runs of ``[a-z0-9]``; *content* tokens drop a fixed English stop list and
tokens shorter than 3 characters, and are reduced by a tiny suffix rule (a trailing ``s`` is
dropped from tokens longer than 4 characters) so "cells"/"cell" match. Deliberately simple and
fully declared: these are transparent baselines, not language understanding.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    """a about above after again against all also among an and any are as at be been before being
    below between both but by can could did do does doing during each few for from further had has
    have having he her here hers him his how however i if in into is it its itself may might more
    most must no nor not of off on once only or other our out over own per same she should so some
    such than that the their them then there these they this those through thus to too under until
    up upon very via was we were what when where whether which while who whom why will with within
    without would yet you your""".split()
)
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _stem(tok: str) -> str:
    return tok[:-1] if len(tok) > 4 and tok.endswith("s") and not tok.endswith("ss") else tok


def content_tokens(text: str) -> list[str]:
    """Stemmed content tokens in order (duplicates kept)."""
    return [_stem(t) for t in tokens(text) if len(t) >= 3 and t not in STOPWORDS]


@functools.lru_cache(maxsize=65536)
def content_set(text: str) -> frozenset[str]:
    return frozenset(content_tokens(text))


def term_present(term: str, text_tokens: frozenset[str]) -> bool:
    """A term (word or phrase) is present when all its content tokens are in the text.

    A term with no content token (e.g. only stop words) falls back to its raw tokens.
    """
    toks = content_tokens(term) or tokens(term)
    return bool(toks) and all(t in text_tokens for t in toks)


def phrase_present(phrase: str, text: str) -> bool:
    """Case-insensitive whole-token phrase match (for must_avoid phrases such as 'no results')."""
    want = tokens(phrase)
    have = tokens(text)
    n = len(want)
    return n > 0 and any(have[i : i + n] == want for i in range(len(have) - n + 1))


def sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by a capital/digit/quote (declared rule)."""
    return [s.strip() for s in _SENT.split(text.strip()) if s.strip()]


def doc_freq(docs: Iterable[str]) -> tuple[dict[str, int], int]:
    """Document frequency of each content token, and the number of documents."""
    df: dict[str, int] = {}
    n = 0
    for d in docs:
        n += 1
        for t in content_set(d):
            df[t] = df.get(t, 0) + 1
    return df, n
