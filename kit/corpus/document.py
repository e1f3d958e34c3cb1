"""One corpus document as every ingester yields it (pure)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    """A document: ``doc_id`` (the canonical label of its primary identifier, e.g. ``PMID:123``,
    or ``file:<path>`` for a text file without one), its texts, and its aliases as canonical
    (scheme, value) pairs -- the primary identifier first."""

    doc_id: str
    title: str
    text: str
    journal: str
    year: int | None
    aliases: tuple[tuple[str, str], ...]
