"""A tool response cut into the records it lists, and what each record holds (pure).

The public face of :mod:`kit.audit.record_formats` (its module doc lists the formats and the
order they are tried in): :func:`split_records` detects the response's format
(:mod:`kit.audit.record_formats.detect`) and reads it with that format's parser -- E-utilities
XML (``pubmed-xml``, ``esummary-xml``), JSON (``europepmc-json``, ``esummary-json``,
``semantic-scholar-json``, ``openalex-json``, ``json``), MEDLINE (``medline``), PubMed's
abstract text (``pubmed-abstract``: ids at the END of each record) -- and, for any other text,
with the declared chain of text rules (:mod:`kit.audit.record_formats.heuristic`: ``key-value``
blocks whose id field opens or closes each block, ``one-paper``, ``markdown`` headings and
bullets, ``numbered`` entries, ``id-led`` lines, the ``heuristic`` paragraph fallback).

**A record's own identifiers** (:attr:`Record.keys`) are those of its id fields and header
lines (:mod:`kit.audit.record_formats.text_keys`), never an identifier its prose mentions
("as reported earlier (PMID 123)") unless it has none of these at all.

**Passage or title only** (:attr:`Record.passage`): a record has a passage when at least
:data:`MIN_PASSAGE_WORDS` words stand in its abstract or other text fields
(:mod:`kit.audit.record_formats.text_passage`; each strict format states its own passage). A
record with a title and no passage gives the verifier nothing to check a claim against: the
audit reports it as ``no_passage`` instead of scoring the claim against the title.

**Format** (:attr:`Record.format`): the name of the format or text rule that read the record.
"""

from __future__ import annotations

from kit.audit.record_formats.detect import split, whole
from kit.audit.record_formats.record import MIN_PASSAGE_WORDS, Key, Record
from kit.audit.record_formats.text_keys import block_keys, explicit_keys, field, field_name
from kit.audit.record_formats.text_passage import has_passage

__all__ = [
    "MIN_PASSAGE_WORDS",
    "Key",
    "Record",
    "block_keys",
    "explicit_keys",
    "field",
    "field_name",
    "has_passage",
    "split_records",
    "whole_record",
]


def split_records(text: str) -> list[Record]:
    """The records of one tool response, in order (module rule)."""
    return split(text)


def whole_record(text: str) -> Record:
    """The whole response as one record (a fetch of the one paper the call asked for): JSON
    as its ``key: value`` lines, words under text fields anywhere; XML as its records' lines;
    text as it stands (:func:`kit.audit.record_formats.detect.whole`)."""
    return whole(text)
