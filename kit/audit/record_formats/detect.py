"""Which record format a tool response is in, and its records read by that format's parser
(pure). The formats and their order: :mod:`kit.audit.record_formats`.

:func:`detect_format` names the response's format from its first lines: E-utilities XML (a
``<PubmedArticleSet>`` / ``<PubmedArticle>`` / ``<eSummaryResult>`` root), JSON (it parses as
JSON or JSON lines), MEDLINE (``PMID- n`` first), PubMed's abstract text (a numbered citation
line first, a ``PMID: n`` line after it), else ``text``. :func:`split` gives the records of the
format's parser; XML that is refused or does not parse, and JSON without record objects (read
as its ``key: value`` lines), fall to the text rules (:mod:`kit.audit.record_formats.heuristic`),
which name the records they cut (``key-value``, ``one-paper``, ``markdown``, ``numbered``,
``id-led``, ``heuristic``).
"""

from __future__ import annotations

from kit.audit.record_formats.eutils_xml import eutils_xml_records, is_eutils_xml
from kit.audit.record_formats.heuristic import ONE_PAPER, text_records
from kit.audit.record_formats.json_records import json_records, whole_json
from kit.audit.record_formats.medline import FORMAT as MEDLINE
from kit.audit.record_formats.medline import is_medline, medline_records
from kit.audit.record_formats.pubmed_text import FORMAT as PUBMED_ABSTRACT
from kit.audit.record_formats.pubmed_text import is_pubmed_abstract, pubmed_abstract_records
from kit.audit.record_formats.record import Record
from kit.audit.record_formats.text_keys import block_keys
from kit.audit.record_formats.text_passage import has_passage
from kit.audit.records_json import flatten, parse_json

XML, JSON, TEXT = "xml", "json", "text"


def detect_format(text: str) -> str:
    """``xml``, ``json``, ``medline``, ``pubmed-abstract`` or ``text`` (module doc)."""
    if is_eutils_xml(text):
        return XML
    if isinstance(parse_json(text), list | dict):
        return JSON
    lines = text.splitlines()
    if is_medline(lines):
        return MEDLINE
    if is_pubmed_abstract(lines):
        return PUBMED_ABSTRACT
    return TEXT


def _formatted(text: str, fmt: str) -> list[Record] | None:
    """The records of a strict format's parser, else None (the text rules decide)."""
    if fmt == XML:
        recs = eutils_xml_records(text)
        return recs if recs else None
    if fmt == MEDLINE:
        return medline_records(text.splitlines())
    if fmt == PUBMED_ABSTRACT:
        return pubmed_abstract_records(text.splitlines())
    return None


def split(text: str) -> list[Record]:
    """The records of one tool response, in order, each naming its format (module doc)."""
    fmt = detect_format(text)
    if fmt == JSON:
        obj = parse_json(text)
        recs = json_records(obj)
        return recs if recs is not None else text_records(flatten(obj))
    recs = _formatted(text, fmt)
    return recs if recs is not None else text_records(text.splitlines())


def whole(text: str) -> Record:
    """The whole response as one record (a fetch of the one paper the call asked for): JSON
    as its ``key: value`` lines, XML as its records' lines, text as it stands; a passage when
    a record of a strict format holds one (else by the text rules' passage test)."""
    fmt = detect_format(text)
    if fmt == JSON:
        return whole_json(parse_json(text))
    recs = _formatted(text, fmt)
    if recs:
        body = "\n\n".join(r.text for r in recs) if fmt == XML else text.strip()
        keys = frozenset().union(*(r.keys for r in recs))
        return Record(body, keys, any(r.passage for r in recs), recs[0].format)
    lines = text.splitlines()
    return Record(text.strip(), block_keys(lines), has_passage(lines), ONE_PAPER)
