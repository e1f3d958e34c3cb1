"""One record of a tool response (pure): its text, its own identifiers, whether it holds a
passage and the format it was read in (:mod:`kit.audit.record_formats` lists the formats)."""

from __future__ import annotations

from dataclasses import dataclass

Key = tuple[str, str]
MIN_PASSAGE_WORDS = 3
HEURISTIC = "heuristic"


@dataclass(frozen=True)
class Record:
    """One record of a tool response: its text, its own identifiers ((scheme, value) keys of
    :class:`kit.corpus.identifiers.Identifier`), whether it holds a passage (at least
    :data:`MIN_PASSAGE_WORDS` words of abstract or other text), and ``format``: the record
    format it was read in (``pubmed-abstract``, ``medline``, ``key-value``, ... ;
    ``heuristic`` when only the paragraph fallback cut it)."""

    text: str
    keys: frozenset[Key]
    passage: bool
    format: str = HEURISTIC
